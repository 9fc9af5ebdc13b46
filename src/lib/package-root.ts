// citc's own package on this machine (src/lib and dist/lib are both two levels down): its templates/
// and playbooks/, which citc runs here and installs on management nodes.
import {fileURLToPath} from 'node:url'

export const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')
