import {nodeProgramCommand} from './program.js'

export default nodeProgramCommand('resume', 'Start compute nodes (Slurm ResumeProgram)')
