// Error codes of libs/xa-coordinator (documented in the library README).
import { createError } from '@dbproxy/util';

export const XaErrors = {
  journalLocked: createError<[string, string]>('DBP_ERR_XA_JOURNAL_LOCKED', 'XA journal %s is in use by another coordinator (%s); only one coordinator may write a journal'),
  journalCorrupt: createError<[string, string]>('DBP_ERR_XA_JOURNAL_CORRUPT', 'XA journal %s cannot be read: %s'),
  journalClosed: createError<[string]>('DBP_ERR_XA_JOURNAL_CLOSED', 'XA journal %s is closed'),
  busy: createError<[number]>('DBP_ERR_XA_BUSY', 'the coordinator already runs %d XA transactions (mysql.xa.max_in_flight)'),
  badStatement: createError<[string]>('DBP_ERR_XA_STATEMENT_NOT_ALLOWED', 'the XA path runs exactly one INSERT, UPDATE, DELETE or REPLACE statement: %s'),
  unknownParticipant: createError<[string, string]>('DBP_ERR_XA_UNKNOWN_PARTICIPANT', 'participant %s of shard %s is not a configured MySQL shard primary'),
  unreachable: createError<[string]>('DBP_ERR_XA_PARTICIPANT_UNREACHABLE', 'the participant could not be reached (%s)'),
  deadline: createError<[string, number]>('DBP_ERR_XA_DEADLINE', '%s did not finish within the deadline of %d ms'),
  notPrepared: createError<[string]>('DBP_ERR_XA_NOT_IN_DOUBT', 'no participant holds a prepared branch of %s'),
  decisionConflict: createError<[string, string]>('DBP_ERR_XA_DECISION_CONFLICT', 'the journal holds a commit decision for %s; %s would break atomicity'),
  aborted: createError<[string]>('DBP_ERR_XA_ABORTED', 'XA transaction %s was rolled back'),
} as const;
