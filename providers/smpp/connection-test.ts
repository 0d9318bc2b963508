/**
 * Does an SMPP provider's account bind? One transceiver bind with the stored account, then an
 * unbind, on a connection of its own (a worker's bind is not touched). An SMSC that allows one
 * bind per account may refuse this one while a worker holds it (ESME_RALYBND): that is said.
 */
import smpp from 'smpp';
import type { ConnectionTest } from '../../domain/provider-definition.js';
import type { SmppProviderConfig } from './config.js';
import { describeStatus, ESME_ROK } from './protocol.js';

const TEST_TIMEOUT_MS = 10_000;

export function testSmppBind(
  config: Pick<SmppProviderConfig, 'host' | 'port' | 'systemId' | 'password' | 'systemType'>,
): Promise<ConnectionTest> {
  const where = `${config.host}:${config.port}`;
  return new Promise((resolve) => {
    let settled = false;
    const session = new smpp.Session({ host: config.host, port: config.port });
    const finish = (result: ConnectionTest) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      session.destroy();
      resolve(result);
    };
    const timeout = setTimeout(
      () =>
        finish({
          ok: false,
          reason: `${where} did not answer within ${TEST_TIMEOUT_MS / 1000} s.`,
        }),
      TEST_TIMEOUT_MS,
    );
    session.on('error', (error: Error & { code?: string }) =>
      finish({
        ok: false,
        reason: `${where} could not be reached (${error.code ?? error.message}).`,
      }),
    );
    session.on('close', () =>
      finish({ ok: false, reason: `${where} closed the connection before the bind was answered.` }),
    );
    session.on('connect', () => {
      const bind = new smpp.PDU('bind_transceiver', {
        system_id: config.systemId,
        password: config.password,
        system_type: config.systemType,
        interface_version: 0x34,
      });
      session.send(bind, (response) => {
        if (response.command_status !== ESME_ROK) {
          finish({
            ok: false,
            reason: `The SMSC refused the bind: ${describeStatus(response.command_status)}.`,
          });
          return;
        }
        session.send(new smpp.PDU('unbind'), () =>
          finish({ ok: true, detail: `Bound to ${where} as ${config.systemId} and unbound.` }),
        );
      });
    });
  });
}
