import { Client, Connection } from '@temporalio/client';

export async function connectTemporalClient(
  address: string,
  namespace: string,
  options: { connectTimeoutMs?: number } = {},
): Promise<Client> {
  const connection = await Connection.connect({
    address,
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeout: options.connectTimeoutMs }),
  });
  return new Client({ connection, namespace });
}
