export { campaignWorkflow } from './campaign.js';
export { helpReplyWorkflow } from './help-reply.js';
export { maintenanceWorkflow } from './maintenance.js';
export { otpWorkflow } from './otp.js';
export { receiptReconciliationWorkflow } from './receipt-reconciliation.js';
export { webhookWorkflow } from './webhook.js';
