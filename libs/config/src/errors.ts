// Errors of libs/config.
import { createError } from '@dbproxy/util';
import { formatIssue, type ConfigIssue } from './issues';

export const ConfigReadFailed = createError<[string, string]>('DBP_ERR_CONFIG_READ', 'cannot read configuration file %s: %s');

/** The document failed validation; `issues` lists every problem with its key path. */
export class ConfigInvalidError extends Error {
  readonly code = 'DBP_ERR_CONFIG_INVALID';
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(`configuration is invalid:\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`);
    this.name = 'ConfigInvalidError';
  }
}

createError('DBP_ERR_CONFIG_INVALID', 'configuration is invalid: %s');
