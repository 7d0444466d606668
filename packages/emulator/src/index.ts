export { envFileText } from './env-file-text.js';
export type { FaultAction, FaultRule } from './faults.js';
export { parseSeed, type Seed } from './seed.js';
export { DEFAULT_CLIENT_ID, type Emulator, type EmulatorOptions, startEmulator } from './start-emulator.js';
export type { RecordedRequest } from './token-api.js';
export { type EmulatedToken, TokenStore } from './token-store.js';
export { EmulatorUsageError, type UsageIssue } from './usage-error.js';
