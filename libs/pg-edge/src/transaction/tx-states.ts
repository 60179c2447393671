// The states of a transaction-mode session and the moves between them.

export type TxSessionState = 'idle' | 'running' | 'batch_open' | 'in_transaction' | 'pinned' | 'poisoned' | 'closed';
export const TX_SESSION_STATES: Readonly<Record<TxSessionState, readonly TxSessionState[]>> = {
  idle: ['running', 'closed'],
  running: ['idle', 'batch_open', 'in_transaction', 'pinned', 'poisoned', 'closed'],
  batch_open: ['running', 'poisoned', 'closed'],
  in_transaction: ['running', 'poisoned', 'closed'],
  pinned: ['running', 'poisoned', 'closed'],
  poisoned: ['closed'],
  closed: [],
};
