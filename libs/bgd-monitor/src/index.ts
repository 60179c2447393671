// Public entry of @dbproxy/bgd-monitor: the service, and the pure parts its tests and tools use.
export { bgdMonitorService } from './service';
export { PHASE_ORDER, intervalFor, phaseOfStatus, SUPPRESSING_PHASES, type BgdPhase } from './phases';
export { nextStep, type Step } from './state-machine';
export { isGreenOf } from './green-naming';
export { isOnline } from './deployment-settings';
