export { maintenanceWorkflow } from './maintenance.js';
