/** Every test file that calls component code in its own process gets it wired as the processes do. */
import { wirePlatform } from '../../workers/root.ts';

wirePlatform();
