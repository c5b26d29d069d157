/**
 * The SQL scopes of HogQL's lambdas (hogql-arrays.ts's LAMBDA_FUNCTIONS) for clickhouse-hogql.ts's Compiler: each
 * variable's fresh name by the name the parser bound (an inner lambda's hiding an outer's), and the values bound
 * outside them. 18.16 finds no column that only a lambda's body names ("Unknown identifier: properties" for
 * `arrayMap(x -> concat(x, properties.s), ['a'])`), so the outermost node holding a lambda is written as the body of a
 * lambda of every value within it that reads no variable (a property, a field, an aggregation, an array …), those
 * values its arguments, outside every lambda.
 */
import { isLambdaCall, itemName } from './hogql-arrays.js'
import type { HogqlNode } from './hogql-math.js'
import { lambdaSql } from './clickhouse-hogql-calls.js'

/** Whether a node holds a lambda. */
const holdsLambda = (node: HogqlNode): boolean => isLambdaCall(node) || ('args' in node && node.args.some(holdsLambda))

/** Whether a node reads a lambda's variable it does not bind itself (an x of a lambda around it). */
function readsItem(node: HogqlNode, bound: ReadonlySet<string> = new Set()): boolean {
  if (node.op === 'scalar') return node.item !== undefined && !bound.has(node.item.name)
  if (!('args' in node)) return false
  if (!isLambdaCall(node)) return node.args.some((arg) => readsItem(arg, bound))
  // A lambda's array is read outside its scope.
  const [arr, variable, body] = node.args as HogqlNode[]
  return readsItem(arr, bound) || readsItem(body, new Set([...bound, itemName(variable)]))
}

export class LambdaScopes {
  #variables = new Map<string, string>()
  /** The values bound around the outermost node holding a lambda (#bound); null outside one. */
  #outer: Array<[string, string]> | null = null
  /** Whether a value of no variable is bound outside, not written where it stands (hoisted). */
  #hoisting = false

  /** `fresh`: a name unique in the query. */
  constructor(private readonly fresh: () => string) {}

  /** `x -> body`: the item's variable a fresh name within `body`. */
  lambda(item: HogqlNode, body: () => string): string {
    const [name, variables, hoisting] = [this.fresh(), this.#variables, this.#hoisting]
    ;[this.#variables, this.#hoisting] = [new Map([...variables, [itemName(item), name]]), true]
    const sql = body()
    ;[this.#variables, this.#hoisting] = [variables, hoisting]
    return `${name} -> ${sql}`
  }

  /** A variable's SQL name where a body reads it. */
  variable(item: HogqlNode): string {
    return this.#variables.get(itemName(item))!
  }

  /** A node's SQL (`own`, written where it stands) as the outermost node holding lambdas writes it. */
  outermost(node: HogqlNode, own: () => string): string {
    return this.#outer === null && holdsLambda(node) ? this.#bound(node, own) : own()
  }

  /** Within a lambda's body, a node that reads none of the variables as a name bound outside them; else null. */
  hoisted(node: HogqlNode, own: () => string): string | null {
    if (!this.#hoisting || readsItem(node)) return null
    const [value, name] = [this.#bound(node, own), this.fresh()]
    this.#outer!.push([name, value])
    return name
  }

  /** `own()` with the values within it of no variable (hoisted, where it holds lambdas) bound around it. */
  #bound(node: HogqlNode, own: () => string): string {
    const saved = [this.#outer, this.#hoisting] as const
    ;[this.#outer, this.#hoisting] = [[], holdsLambda(node)]
    const sql = own()
    const outer = this.#outer!
    ;[this.#outer, this.#hoisting] = saved
    return outer.length === 0 ? sql : lambdaSql(outer.map(([name]) => name), outer.map(([, value]) => value), sql)
  }
}
