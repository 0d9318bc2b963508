import { upsertSearchAttributes } from '@temporalio/workflow';
import { searchAttributes } from './definitions.js';

/** Sets HeraldStatus: where the run is, as an operator filters on it in the Temporal UI. */
export function setRunStatus(status: string): void {
  upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
}
