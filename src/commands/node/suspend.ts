import {nodeProgramCommand} from './program.js'

export default nodeProgramCommand('suspend', 'Stop compute nodes (Slurm SuspendProgram)')
