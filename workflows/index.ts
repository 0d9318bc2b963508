export { campaignWorkflow } from './campaign.js';
export { maintenanceWorkflow } from './maintenance.js';
export { otpWorkflow } from './otp.js';
export { webhookWorkflow } from './webhook.js';
