// ec2-xml.ts, the reader of EC2's answers: what EC2 sends (a prolog, a namespaced root, <item> lists,
// self-closed empty lists, escaped text) read right, and what is not well-formed refused.
import {describe, expect, it} from 'vitest'

import {child, itemsOf, parseXml, textOf} from '../../../../src/lib/providers/aws/ec2-xml.js'

describe('parseXml', () => {
  it('reads an EC2 answer: prolog, namespace attribute, nested items, empty lists, escaped text', () => {
    const root = parseXml(
      '<?xml version="1.0" encoding="UTF-8"?>\n<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">\n' +
        '  <requestId>r-1</requestId>\n  <reservationSet>\n    <item><groupSet/><instancesSet><item><instanceId>i-1</instanceId>' +
        '<tagSet><item><key>note</key><value>a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#233;&#x263A;</value></item><item><key>empty</key><value/></item></tagSet>' +
        '</item></instancesSet></item>\n  </reservationSet>\n  <!-- a comment --><nextToken><![CDATA[x<y]]></nextToken>\n</DescribeInstancesResponse>\n',
    )
    expect(root.name).toBe('DescribeInstancesResponse')
    expect(textOf(root, 'requestId')).toBe('r-1')
    const reservations = itemsOf(root, 'reservationSet')!
    expect(reservations).toHaveLength(1)
    expect(itemsOf(reservations[0], 'groupSet')).toEqual([])
    const instance = itemsOf(reservations[0], 'instancesSet')![0]!
    expect(textOf(instance, 'instanceId')).toBe('i-1')
    const tags = itemsOf(instance, 'tagSet')!.map((t) => [textOf(t, 'key'), textOf(t, 'value')])
    expect(tags).toEqual([
      ['note', 'a & b <c> "d" \'e\' é☺'],
      ['empty', ''],
    ])
    expect(textOf(root, 'nextToken')).toBe('x<y')
    expect(child(root, 'absent')).toBeUndefined()
    expect(itemsOf(root, 'absent')).toBeUndefined()
  })

  it.each([
    ['<a><b></a>', /<\/a> closes <b>/],
    ['<a>', /<a> is not closed/],
    ['<a/><b/>', /2 root elements/],
    ['<a>&nbsp;</a>', /unknown XML entity &nbsp;/],
    ['<a', /no > after/],
    ['', /0 root elements/],
  ])('refuses %j', (xml, error) => {
    expect(() => parseXml(xml)).toThrow(error)
  })

  it('reads a 1,000-instance page in well under a second (one pass)', () => {
    const item = '<item><instanceId>i-0123456789abcdef0</instanceId><tagSet><item><key>Name</key><value>demo-c5-0001</value></item></tagSet></item>'
    const xml = `<R><reservationSet>${`<item><instancesSet>${item}</instancesSet></item>`.repeat(1000)}</reservationSet></R>`
    const t0 = performance.now()
    expect(itemsOf(parseXml(xml), 'reservationSet')).toHaveLength(1000)
    expect(performance.now() - t0).toBeLessThan(1000)
  })
})
