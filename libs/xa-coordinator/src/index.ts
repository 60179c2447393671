// Public entry point of libs/xa-coordinator: the xa-coordinator service (two-phase commit across
// MySQL shard primaries with a fsynced decision journal and recovery), its journal, and the
// client mysql-edge calls.
export { xaCoordinatorService } from './service';
export { XaErrors } from './errors';
export { DecisionJournal, type JournalOptions, type JournalStats } from './journal/decision-journal';
export { decodeRecords, encodeRecord, type JournalRecord, type CommitRecord } from './journal/record-codec';
export { XaClient, type XaParticipant, type XaResult } from './client';
export { FAULT_ENV } from './fault-hook';
export type { InDoubtBranch } from './recovery';
