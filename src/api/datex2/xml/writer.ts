import { XMLBuilder } from 'fast-xml-parser';

/**
 * The DATEX II 3.7 namespaces the publications use, and the few calls every publication is built with:
 * elements are made as a tree (`el`, `typed`, `multilingual`) and written by fast-xml-parser's
 * `XMLBuilder`, which escapes every text and attribute value, so what a station's name holds can never
 * break the document. Nothing writes tags into strings.
 *
 * The tree is the builder's order-preserving form (`preserveOrder`): each element an object
 * `{ [qualified name]: children, ':@': attributes }`, each text `{ '#text': value }`.
 *
 * A thousand stations make megabytes of XML, and writing them takes the builder tens of milliseconds,
 * while one station's part changes at a time. So a publication keeps each station's element as the
 * builder wrote it (`writeElement`) and writes the document around the kept pieces
 * (`writeAround`): the builder writes the envelope with a marker comment where the pieces go. The
 * prefixes are all declared on the root, so an element written alone is byte for byte what the builder
 * writes for it inside the whole document (the tests check that the two are the same).
 */
export const NS = {
  d2: 'http://datex2.eu/schema/3/d2Payload',
  com: 'http://datex2.eu/schema/3/common',
  loc: 'http://datex2.eu/schema/3/locationReferencing',
  locx: 'http://datex2.eu/schema/3/locationExtension',
  fac: 'http://datex2.eu/schema/3/facilities',
  afac: 'http://datex2.eu/schema/3/afirFacilities',
  aegi: 'http://datex2.eu/schema/3/afirEnergyInfrastructure',
  xsi: 'http://www.w3.org/2001/XMLSchema-instance',
} as const;

export type Prefix = keyof typeof NS;

type Item = Record<string, unknown>;

/** Characters XML 1.0 does not allow (C0 controls but tab, newline and return; U+FFFE, U+FFFF; lone surrogates): left out. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A text as XML 1.0 can carry it. */
export const xmlText = (value: string): string => value.replace(NOT_XML, '');

/** An element of the tree, to which children and attributes are added in schema order. */
export class Node {
  readonly item: Item;
  private readonly children: Item[] = [];

  constructor(name: string) {
    this.item = { [name]: this.children };
  }

  /** Sets an attribute (value escaped when written). */
  att(name: string, value: string): this {
    const attributes = (this.item[':@'] ??= {}) as Record<string, string>;
    attributes[`@_${name}`] = xmlText(value);
    return this;
  }

  /** Appends a child element, or a kept subtree. */
  append(child: Node | Item): void {
    this.children.push(child instanceof Node ? child.item : child);
  }

  text(value: string): void {
    this.children.push({ '#text': xmlText(value) });
  }
}

/**
 * A text as DATEX's strings take it: `com:String` and `com:MultilingualStringValueType` hold at most
 * 1024 characters (code points, as XML Schema counts them); longer registry texts are cut there.
 */
export const clip = (value: string): string => (value.length <= 1024 ? value : Array.from(value).slice(0, 1024).join(''));

/** A child element `prefix:name` of `parent`, with optional text (strings cut at 1024 characters). */
export function el(parent: Node, prefix: Prefix, name: string, text?: string | number | boolean): Node {
  const node = new Node(`${prefix}:${name}`);
  if (text !== undefined) node.text(typeof text === 'string' ? clip(text) : String(text));
  parent.append(node);
  return node;
}

/** `xsi:type` on an element whose declared type is abstract or a base type. */
export function typed(node: Node, type: `${Prefix}:${string}`): Node {
  return node.att('xsi:type', type);
}

/**
 * A `com:MultilingualString`'s content: `values/value`, with its language when it is known: the
 * platform's own words are English (`en`); names and addresses are given in no stated language.
 */
export function multilingual(parent: Node, prefix: Prefix, name: string, text: string, lang?: 'en'): Node {
  const node = el(parent, prefix, name);
  const value = el(el(node, 'com', 'values'), 'com', 'value', text);
  if (lang !== undefined) value.att('lang', lang);
  return node;
}

const builder = new XMLBuilder({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  processEntities: true,
  commentPropName: '#comment',
  suppressEmptyNode: true,
  format: false,
});

/** A detached element (a site, kept and placed into documents later). */
export function detached(prefix: Prefix, name: string): Node {
  return new Node(`${prefix}:${name}`);
}

/** One element as the builder writes it (its prefixes declared by the document it is placed in). */
export function writeElement(node: Node): string {
  return builder.build([node.item]) as string;
}

const DECLARATION = { '?xml': [{ '#text': '' }], ':@': { '@_version': '1.0', '@_encoding': 'UTF-8' } };
const MARKER = 'kept elements';

export interface PayloadDocument {
  root: Node;
  /** The whole document. */
  write(): string;
  /** The whole document with `pieces` (elements from `writeElement`) as the last children of `container`. */
  writeAround(container: Node, pieces: readonly string[]): string;
}

/** A `d2:payload` of the given publication type, with every namespace declared on it. */
export function payloadDocument(publicationType: `${Prefix}:${string}`): PayloadDocument {
  const root = new Node('d2:payload');
  for (const [prefix, uri] of Object.entries(NS)) root.att(`xmlns:${prefix}`, uri);
  typed(root, publicationType);
  const write = () => builder.build([DECLARATION, root.item]) as string;
  return {
    root,
    write,
    writeAround(container, pieces) {
      container.append({ '#comment': [{ '#text': MARKER }] });
      const [head, tail, ...more] = write().split(`<!--${MARKER}-->`);
      if (tail === undefined || more.length > 0) throw new Error('the document must hold the marker once');
      return head + pieces.join('') + tail;
    },
  };
}
