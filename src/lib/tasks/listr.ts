// One way to build task lists, so every command gets the same renderer policy and timers.
import {Listr, type ListrTask, PRESET_TIMER} from 'listr2'

import type {RendererName} from '../base-command.js'

export function taskList<Ctx>(tasks: ListrTask<Ctx>[], renderer: RendererName, ctx?: Ctx): Listr<Ctx> {
  return new Listr<Ctx>(tasks, {
    ctx,
    renderer,
    fallbackRenderer: 'simple',
    exitOnError: true,
    // Ctrl-C is handled by the workflows themselves (rollback first, then exit 130).
    registerSignalListeners: false,
    rendererOptions: {timer: PRESET_TIMER, collapseSubtasks: false, showErrorMessage: false},
    fallbackRendererOptions: {timer: PRESET_TIMER},
  } as ConstructorParameters<typeof Listr<Ctx>>[1])
}

export {withInterrupts} from './interrupts.js'
