/** Whether this process may listen on ports 80 and 443 (see low-ports.mjs). */
export function canBindLowPorts(): boolean;
