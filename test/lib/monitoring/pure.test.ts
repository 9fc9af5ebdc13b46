// The pure parts of citc monitor: the page server's routing and token check, the query result's
// table, the monitoring section's absence, and when a browser is opened.
import {describe, expect, it} from 'vitest'

import type {ManagementContract} from '../../../src/lib/cluster/management-contract.js'
import {CitcError} from '../../../src/lib/errors.js'
import {shouldOpenBrowser} from '../../../src/lib/monitoring/monitor.js'
import {resultTable, seriesName} from '../../../src/lib/monitoring/prometheus.js'
import {prometheusUrlOf} from '../../../src/lib/monitoring/reach.js'
import {newToken, route, tokenMatches} from '../../../src/lib/monitoring/server.js'

const TOKEN = 'abcDEF0123456789_-xyzw'

describe('route', () => {
  it('forbids every path without the exact token first', () => {
    for (const url of ['/', '/index.html', '/api/v1/query?query=up', `/${TOKEN}x/`, `/${TOKEN.slice(1)}/`, `/x/${TOKEN}/`, `/${TOKEN.toUpperCase()}/`, `//${TOKEN}/`, `/?token=${TOKEN}`]) {
      expect(route(url, TOKEN), url).toEqual({kind: 'forbidden'})
    }
  })

  it('sends the page, its files and exactly two Prometheus calls', () => {
    expect(route(`/${TOKEN}`, TOKEN)).toEqual({kind: 'redirect'})
    expect(route(`/${TOKEN}/`, TOKEN)).toEqual({kind: 'asset', path: '', search: ''})
    expect(route(`/${TOKEN}/uplot.js`, TOKEN)).toEqual({kind: 'asset', path: 'uplot.js', search: ''})
    expect(route(`/${TOKEN}/api/v1/query?query=up&time=1`, TOKEN)).toEqual({kind: 'api', path: 'api/v1/query', search: '?query=up&time=1'})
    expect(route(`/${TOKEN}/api/v1/query_range?query=up`, TOKEN)).toMatchObject({kind: 'api', path: 'api/v1/query_range'})
    for (const path of ['api/v1/targets', 'api/v1/admin/tsdb/delete_series', 'api/v1/query/', 'api/v1/series', 'federate', '-/quit']) {
      expect(route(`/${TOKEN}/${path}`, TOKEN).kind, path).toBe('asset') // an unknown asset: 404
    }
  })
})

describe('tokens', () => {
  it('are 128 random bits, URL-safe, different each time', () => {
    const a = newToken()
    expect(a).toMatch(/^[\w-]{22}$/)
    expect(Buffer.from(a, 'base64url')).toHaveLength(16)
    expect(new Set(Array.from({length: 50}, newToken)).size).toBe(50)
  })

  it('match only themselves', () => {
    expect(tokenMatches(TOKEN, TOKEN)).toBe(true)
    expect(tokenMatches(TOKEN.slice(0, -1) + 'v', TOKEN)).toBe(false)
    expect(tokenMatches('', TOKEN)).toBe(false)
    expect(tokenMatches(TOKEN + 'a', TOKEN)).toBe(false)
  })
})

describe('resultTable', () => {
  it('prints a vector one series a line, labels sorted and quoted, values aligned', () => {
    const text = resultTable({
      resultType: 'vector',
      result: [
        {metric: {__name__: 'citc_slurm_nodes', state: 'idle', power: 'off'}, value: [1, '3']},
        {metric: {power: 'on'}, value: [1, '2']},
        {metric: {}, value: [1, '7']},
      ],
    })
    expect(text.split('\n')).toEqual(['citc_slurm_nodes{power="off", state="idle"}  3', '{power="on"}                                 2', '{}                                           7'])
  })

  it('prints a matrix’s values with their times, a scalar bare, and says when nothing matched', () => {
    expect(resultTable({resultType: 'matrix', result: [{metric: {node: 'n1'}, values: [[10, '1'], [40, '0']]}]})).toBe('{node="n1"}  1 @10, 0 @40')
    expect(resultTable({resultType: 'scalar', result: [1, '42']})).toBe('42')
    expect(resultTable({resultType: 'vector', result: []})).toMatch(/^\(no series/)
  })

  it('quotes what a label value holds', () => {
    expect(seriesName({reason: 'citc: "quota" hit\n'})).toBe('{reason="citc: \\"quota\\" hit\\n"}')
  })
})

describe('prometheusUrlOf', () => {
  const contract = {version: 1, name: 'lab', provider: 'local', driver: {}} as unknown as ManagementContract
  it('is the monitoring section’s URL', () => {
    expect(prometheusUrlOf({...contract, monitoring: {dir: '/d', prometheusUrl: 'http://127.0.0.1:9090', every: 30}}, 'lab').port).toBe('9090')
  })
  it('explains a cluster created with --no-monitoring', () => {
    let error: unknown
    try {
      prometheusUrlOf(contract, 'lab')
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).message).toMatch(/^cluster lab was created with --no-monitoring: /)
    expect((error as CitcError).hint).toMatch(/citc create --name lab/)
  })
})

describe('shouldOpenBrowser', () => {
  it('opens one only when asked, on a display, outside CI', () => {
    expect(shouldOpenBrowser({open: true, env: {DISPLAY: ':0'}})).toBe(true)
    expect(shouldOpenBrowser({open: true, env: {WAYLAND_DISPLAY: 'wayland-0'}})).toBe(true)
    expect(shouldOpenBrowser({open: false, env: {DISPLAY: ':0'}})).toBe(false)
    expect(shouldOpenBrowser({open: true, env: {}})).toBe(false)
    expect(shouldOpenBrowser({open: true, env: {DISPLAY: ':0', CI: 'true'}})).toBe(false)
    expect(shouldOpenBrowser({open: true, env: {DISPLAY: ':0', CI: 'false'}})).toBe(true)
  })
})
