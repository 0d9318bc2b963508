/** The parts of the `smpp` package (0.5.x, CommonJS, untyped) Herald and its test peer use. */
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  namespace smpp {
    type PduOptions = Record<string, unknown>;

    class PDU {
      constructor(command: string, options?: PduOptions);
      command: string;
      command_id: number;
      command_status: number;
      sequence_number: number;
      isResponse(): boolean;
      response(options?: PduOptions): PDU;
      toBuffer(): Buffer;
      [field: string]: unknown;
    }

    class Session extends EventEmitter {
      constructor(options: { host?: string; port?: number; socket?: Socket });
      socket: Socket;
      /** Writes the PDU; false when the socket is no longer writable (nothing was written). */
      send(
        pdu: PDU,
        responseCallback?: (response: PDU) => void,
        sendCallback?: () => void,
      ): boolean;
      close(callback?: () => void): void;
      destroy(callback?: () => void): void;
    }

    class Server extends NetServer {
      sessions: Session[];
    }

    function createServer(listener: (session: Session) => void): Server;
    function createServer(options: object, listener: (session: Session) => void): Server;

    const errors: Record<string, number>;
  }

  export = smpp;
}
