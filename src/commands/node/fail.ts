import {nodeProgramCommand} from './program.js'

export default nodeProgramCommand('fail', 'Clean up nodes that did not start in time (Slurm ResumeFailProgram)')
