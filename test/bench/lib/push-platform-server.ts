/** ./platform-server.ts (same environment) that also answers `memory` queries (./memory-probe.ts). */
import './memory-probe.js';
import './platform-server.js';
