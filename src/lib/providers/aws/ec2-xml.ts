// A small XML reader for EC2's answers (Amazon EC2 API Reference, "Query API responses"): elements,
// text, the five entities and character references, CDATA, comments and the <?xml?> prolog.
// Attributes are skipped (EC2 puts only xmlns on the root) and so is mixed content's structure: an
// element's text is what its own text nodes hold. One pass, linear in the answer's size
// (DescribeInstances' 1,000-instance pages are a few MB).

export interface XmlElement {
  name: string
  children: XmlElement[]
  text: string
}

const ENTITIES: Record<string, string> = {amp: '&', lt: '<', gt: '>', quot: '"', apos: "'"}

function decode(s: string): string {
  if (!s.includes('&')) return s
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (all, ref: string) => {
    if (ref.startsWith('#x')) return String.fromCodePoint(parseInt(ref.slice(2), 16))
    if (ref.startsWith('#')) return String.fromCodePoint(parseInt(ref.slice(1), 10))
    const e = ENTITIES[ref]
    if (e === undefined) throw new Error(`unknown XML entity ${all}`)
    return e
  })
}

/** The document's root element; throws on what is not well-formed as far as this reader looks. */
export function parseXml(xml: string): XmlElement {
  const top: XmlElement = {name: '', children: [], text: ''}
  const stack: XmlElement[] = [top]
  let i = 0
  while (i < xml.length) {
    const lt = xml.indexOf('<', i)
    const end = lt < 0 ? xml.length : lt
    if (end > i) stack[stack.length - 1]!.text += decode(xml.slice(i, end))
    if (lt < 0) break
    if (xml.startsWith('<?', lt)) {
      i = after(xml, '?>', lt)
    } else if (xml.startsWith('<!--', lt)) {
      i = after(xml, '-->', lt)
    } else if (xml.startsWith('<![CDATA[', lt)) {
      const close = after(xml, ']]>', lt)
      stack[stack.length - 1]!.text += xml.slice(lt + 9, close - 3)
      i = close
    } else if (xml.startsWith('<!', lt)) {
      i = after(xml, '>', lt) // a DOCTYPE: EC2 sends none, and no entity it declared would be honoured
    } else if (xml[lt + 1] === '/') {
      const close = after(xml, '>', lt)
      const name = xml.slice(lt + 2, close - 1).trim()
      const open = stack.pop()
      if (!open || open === top || open.name !== name) throw new Error(`XML: </${name}> closes ${open && open !== top ? `<${open.name}>` : 'nothing'}`)
      i = close
    } else {
      const close = after(xml, '>', lt)
      const selfClosing = xml[close - 2] === '/'
      const inner = xml.slice(lt + 1, close - (selfClosing ? 2 : 1))
      const name = /^[^\s/>]+/.exec(inner)?.[0]
      if (!name) throw new Error(`XML: a tag without a name at ${lt}`)
      const element: XmlElement = {name, children: [], text: ''}
      stack[stack.length - 1]!.children.push(element)
      if (!selfClosing) stack.push(element)
      i = close
    }
  }
  if (stack.length !== 1) throw new Error(`XML: <${stack[stack.length - 1]!.name}> is not closed`)
  const roots = top.children
  if (roots.length !== 1) throw new Error(`XML: ${roots.length} root elements`)
  return roots[0]!
}

function after(xml: string, token: string, from: number): number {
  const at = xml.indexOf(token, from)
  if (at < 0) throw new Error(`XML: no ${token} after position ${from}`)
  return at + token.length
}

/** The first child element named `name`. */
export const child = (e: XmlElement | undefined, name: string): XmlElement | undefined => e?.children.find((c) => c.name === name)

/** The text of the child element `name`, or undefined when there is none. */
export const textOf = (e: XmlElement | undefined, name: string): string | undefined => child(e, name)?.text

/** The <item>s of the list element `name` (EC2 wraps every list member in <item>), or undefined when the list is absent. */
export const itemsOf = (e: XmlElement | undefined, name: string): XmlElement[] | undefined => child(e, name)?.children.filter((c) => c.name === 'item')
