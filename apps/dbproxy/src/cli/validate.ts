// `dbproxy validate --config FILE`: exit 0 with a summary, or exit 2 with every problem and its key path.
import { formatIssue, loadConfigFile, summarizeConfig } from '@dbproxy/config';
import { errorMessage } from '@dbproxy/util';

export function validateCommand(configPath: string, out: (line: string) => void, err: (line: string) => void): number {
  let result;
  try {
    result = loadConfigFile(configPath);
  } catch (e) {
    err(errorMessage(e));
    return 2;
  }
  if (!result.ok) {
    err(`${configPath}: ${result.issues.length} problem(s)`);
    for (const issue of result.issues) err(`  ${formatIssue(issue)}`);
    return 2;
  }
  out(`${configPath}: valid`);
  for (const line of summarizeConfig(result.config)) out(`  ${line}`);
  return 0;
}
