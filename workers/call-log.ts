/**
 * The recorder's type under its former path, for src/services.ts. The call log lives under
 * workers/call-log/: job.ts (the job), producer.ts (the recorder), processor.ts (the worker).
 */
export type { CallLogRecorder } from './call-log/producer.js';
