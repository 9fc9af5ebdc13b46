// Where `citc status --watch` shows each refresh. On a terminal: the frame redrawn in place — the cursor
// goes back up over the last frame and each line is overwritten and its rest erased, so nothing is
// cleared first (no flicker); lines are cut to the terminal's width and the frame to its height, so the
// cursor never has to climb above the screen's top (which would leave copies in the scrollback).
// Elsewhere (pipes, CI, log files): each refresh printed after the last, under a timestamped header,
// without escape codes.

/** The part of a stream the screens use (process.stdout, or a test's fake). */
export interface ScreenStream {
  write(s: string): unknown
  isTTY?: boolean
  columns?: number
  rows?: number
  on?(event: 'resize', listener: () => void): unknown
  off?(event: 'resize', listener: () => void): unknown
}

export interface Screen {
  /** Show one refresh: a header line (what, when) and the body's lines. */
  show(header: string, body: string): void
  /** Watching ended: the cursor is given back, the last frame stays. */
  end(): void
}

const ESC = '\u001B['
export const ANSI = {
  hideCursor: `${ESC}?25l`,
  showCursor: `${ESC}?25h`,
  /** Erase from the cursor to the end of the line. */
  eraseLineEnd: `${ESC}K`,
  /** Erase from the cursor to the end of the screen (what a shorter frame leaves below). */
  eraseDown: `${ESC}J`,
  /** Home and clear: after a resize, the terminal may have re-wrapped the last frame. */
  clearScreen: `${ESC}H${ESC}2J`,
  up: (n: number) => `${ESC}${n}A`,
  /** Synchronized output (DEC mode 2026): terminals that know it paint the frame at once; others ignore it. */
  beginSync: `${ESC}?2026h`,
  endSync: `${ESC}?2026l`,
} as const

/** A terminal's size when the stream does not say (a pty whose size was never set). */
const FALLBACK = {columns: 80, rows: 24}

/**
 * The lines that fit: each cut to `columns - 1` characters (the last column would wrap on some
 * terminals), at most `rows - 1` lines (the cursor rests on the line below), the last one saying how
 * many were left out.
 */
export function fitToTerminal(lines: readonly string[], columns: number, rows: number): string[] {
  const width = Math.max(columns - 1, 10)
  const height = Math.max(rows - 1, 3)
  const cut = (l: string) => {
    const chars = [...l]
    return chars.length > width ? chars.slice(0, width - 1).join('') + '…' : l
  }
  if (lines.length <= height) return lines.map(cut)
  const kept = lines.slice(0, height - 1).map(cut)
  return [...kept, cut(`… ${lines.length - kept.length} more lines: make the terminal taller (citc status prints them all)`)]
}

export function terminalScreen(out: ScreenStream): Screen {
  /** Lines of the frame on screen now (the cursor is on the line below it). */
  let drawn = 0
  let resized = false
  const onResize = () => {
    resized = true
  }
  out.on?.('resize', onResize)
  let started = false
  return {
    show(header, body) {
      const lines = fitToTerminal([header, ...body.split('\n')], out.columns || FALLBACK.columns, out.rows || FALLBACK.rows)
      let back = ''
      if (!started) back = ANSI.hideCursor
      else if (resized) back = ANSI.clearScreen
      else if (drawn > 0) back = `\r${ANSI.up(drawn)}`
      started = true
      resized = false
      // One write per frame: the terminal never shows half of one.
      out.write(ANSI.beginSync + back + lines.map((l) => l + ANSI.eraseLineEnd + '\n').join('') + ANSI.eraseDown + ANSI.endSync)
      drawn = lines.length
    },
    end() {
      out.off?.('resize', onResize)
      // Ctrl-C's echoed "^C" sits on the line below the frame: erase it, give the cursor back.
      out.write(`\r${ANSI.eraseLineEnd}${ANSI.showCursor}`)
    },
  }
}

/** Each refresh after the last, under a header line: for pipes and logs. */
export function plainScreen(out: ScreenStream): Screen {
  let first = true
  return {
    show(header, body) {
      out.write(`${first ? '' : '\n'}=== ${header} ===\n${body}\n`)
      first = false
    },
    end() {},
  }
}

export const screenFor = (out: ScreenStream): Screen => (out.isTTY ? terminalScreen(out) : plainScreen(out))
