export { campaignWorkflow } from './campaign.js';
export { maintenanceWorkflow } from './maintenance.js';
