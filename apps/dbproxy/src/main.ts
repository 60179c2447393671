// Public entry point of dbproxy-app.
import { answer } from '@dbproxy/util';
process.stdout.write(String(answer) + '\n');
