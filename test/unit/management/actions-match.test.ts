/**
 * Does a stored event match an action, on PostHog's semantics (`action_to_expr` in posthog/hogql/property.py,
 * `build_selector_regex`): any step, each step's conditions all; the url's modes with LIKE's wildcards; the
 * element conditions only on `$autocapture` steps, read from the elements chain as posthog-js sends it;
 * property filters as skylark's stores apply them; what skylark can't evaluate refused, never ignored.
 */
import t from 'tap'
import { compileAction, type MatchableEvent } from '../../../src/management/actions/index.js'
import { like } from '../../../src/common/sql-like.js'
import { toStep, type ActionStep } from '../../../src/management/actions/record.js'
import { parseSelector, selectorRegex } from '../../../src/management/actions/selector.js'

const action = (...steps: Partial<ActionStep>[]) => compileAction(steps.map(toStep))
const event = (name: string, properties: Record<string, unknown> = {}, elements_chain = ''): MatchableEvent => ({ event: name, distinct_id: 'd', properties, elements_chain })

/** A click on a button inside a form, as posthog-js serialises the chain (clicked element first, keys sorted). */
const SIGNUP_CLICK =
  'button.btn.btn-primary:attr__class="btn btn-primary"attr_id="signup"nth-child="2"nth-of-type="1"text="Sign UP now";' +
  'form.signup:attr__class="signup"attr__data-attr="form"nth-child="1"nth-of-type="1";' +
  'div.container:attr__class="container"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"'
const LINK_CLICK = 'a:attr__href="/Pricing?plan=pro"href="/Pricing?plan=pro"nth-child="1"nth-of-type="1"text="See pricing";nav:nth-child="1"nth-of-type="1"'
const click = (chain: string, properties: Record<string, unknown> = {}) => event('$autocapture', properties, chain)

t.test('an action without steps matches every event, and one step is enough', async (t) => {
  t.ok(action()(event('anything')))
  const signupOrPurchase = action({ event: 'signed_up' }, { event: 'purchase' })
  t.ok(signupOrPurchase(event('purchase')))
  t.notOk(signupOrPurchase(event('pageleave')))
  t.ok(action({})(event('whatever')), 'a step without conditions matches')
})

t.test("the url matches $current_url: contains (the default, case-sensitive LIKE), exact, regex", async (t) => {
  const at = (url: unknown) => event('$pageview', { $current_url: url })
  const contains = action({ event: '$pageview', url: '/signup' })
  t.ok(contains(at('https://app.example.com/signup?x=1')))
  t.notOk(contains(at('https://app.example.com/SIGNUP')), 'LIKE is case-sensitive')
  t.notOk(contains(event('$pageview')), 'no url, no match')
  t.notOk(contains(at(null)))
  t.ok(action({ url: 'a_c' })(at('/abc')), "LIKE's _ is any one character, as in PostHog")
  t.ok(action({ url: '/shop%/cart' })(at('/shop/42/cart')), "and % any run")
  t.notOk(action({ url: 'a\\_c' })(at('/abc')), 'unless escaped')
  t.ok(action({ url: '/signup', url_matching: null })(at('/signup/step-2')), 'a null mode is contains')
  const exact = action({ url: 'https://example.com/', url_matching: 'exact' })
  t.ok(exact(at('https://example.com/')))
  t.notOk(exact(at('https://example.com/?a=1')))
  const regex = action({ url: '^https://[^/]+/docs/\\d+$', url_matching: 'regex' })
  t.ok(regex(at('https://posthog.com/docs/12')))
  t.notOk(regex(at('https://posthog.com/docs/x')))
  t.notOk(action({ url: '(', url_matching: 'regex' })(at('(')), 'an invalid pattern matches nothing')
  t.notOk(action({ url: 'a(?=b)', url_matching: 'regex' })(at('ab')), 'nor does one re2 could not run')
  t.ok(action({ url: 'a(?=b)', url_matching: 'regex' }, { url: 'ab' })(at('ab')), 'while the other steps still match')
})

t.test('element conditions read the chain of $autocapture events and are ignored on other steps', async (t) => {
  t.ok(action({ event: '$autocapture', selector: 'div > form > button' })(click(SIGNUP_CLICK)))
  t.ok(action({ event: '$autocapture', selector: 'button' })(click(SIGNUP_CLICK)))
  t.ok(action({ event: '$autocapture', selector: '.btn-primary' })(click(SIGNUP_CLICK)), 'a class')
  t.ok(action({ event: '$autocapture', selector: 'button.btn-primary.btn' })(click(SIGNUP_CLICK)), 'classes in any order')
  t.ok(action({ event: '$autocapture', selector: '#signup' })(click(SIGNUP_CLICK)), 'an id alone is matched by id')
  t.notOk(action({ event: '$autocapture', selector: '#login' })(click(SIGNUP_CLICK)))
  t.ok(action({ event: '$autocapture', selector: '[data-attr="form"] > button' })(click(SIGNUP_CLICK)), 'a custom attribute')
  t.notOk(action({ event: '$autocapture', selector: 'div > button' })(click(SIGNUP_CLICK)), 'the button is not a child of the div')
  t.notOk(action({ event: '$autocapture', selector: 'a' })(click(SIGNUP_CLICK)), 'no link in the chain')
  t.notOk(action({ event: '$autocapture', selector: 'button' })(click(LINK_CLICK)))

  t.ok(action({ event: '$autocapture', tag_name: 'a' })(click(LINK_CLICK)))
  t.notOk(action({ event: '$autocapture', tag_name: 'button' })(click(LINK_CLICK)))

  t.ok(action({ event: '$autocapture', text: 'See pricing' })(click(LINK_CLICK)), 'text is exact by default')
  t.notOk(action({ event: '$autocapture', text: 'see pricing' })(click(LINK_CLICK)))
  t.ok(action({ event: '$autocapture', text: 'sign up', text_matching: 'contains' })(click(SIGNUP_CLICK)), 'contains ignores case')
  t.ok(action({ event: '$autocapture', text: '^Sign\\s+UP', text_matching: 'regex' })(click(SIGNUP_CLICK)))

  t.ok(action({ event: '$autocapture', href: '/Pricing?plan=pro' })(click(LINK_CLICK)), 'href is exact by default')
  t.ok(action({ event: '$autocapture', href: 'pricing', href_matching: 'contains' })(click(LINK_CLICK)), 'contains ignores case')
  t.notOk(action({ event: '$autocapture', href: '/pricing', href_matching: 'exact' })(click(LINK_CLICK)))
  t.ok(action({ event: '$autocapture', href: 'plan=(pro|team)$', href_matching: 'regex' })(click(LINK_CLICK)))
  t.notOk(action({ event: '$autocapture', href: 'pricing', href_matching: 'contains' })(click(SIGNUP_CLICK)), 'no href, no match')

  t.ok(action({ event: '$pageview', text: 'nowhere', selector: '#none' })(event('$pageview')), 'ignored off $autocapture, as PostHog ignores them')
  t.notOk(action({ event: '$autocapture', text: 'See pricing', url: '/docs' })(click(LINK_CLICK, { $current_url: '/pricing' })), 'every condition of a step must hold')
  t.ok(action({ event: '$autocapture', text: 'See pricing', url: '/pricing' })(click(LINK_CLICK, { $current_url: 'https://x.io/pricing' })))
})

t.test("a selector becomes PostHog's regex over the chain", async (t) => {
  const end = '([-_a-zA-Z0-9\\.:"= \\[\\]\\(\\),]*?)?($|;|:([^;^\\s]*(;|$|\\s)))'
  t.equal(selectorRegex(parseSelector('div > button')), `(^|;)button${end}div${end}.*`)
  t.equal(selectorRegex(parseSelector('button.b.a')), `(^|;)button.*?\\.a\\..*?b${end}`)
  t.equal(selectorRegex(parseSelector('[data-attr="x.y"]')), `(^|;).*?data-attr="x\\.y".*?${end}`)
  t.same(parseSelector('#signup').map((p) => [p.attrId, p.dataKeys]), [['signup', 1]])
})

t.test('property filters (HogQL ones too) hold as the stores apply them, and what skylark cannot evaluate is refused', async (t) => {
  const chrome = action({ event: '$pageview', properties: [{ key: '$browser', value: 'Chrome' }] })
  t.ok(chrome(event('$pageview', { $browser: 'Chrome' })))
  t.notOk(chrome(event('$pageview', { $browser: 'Firefox' })))
  t.notOk(chrome(event('$pageview')))
  const notChrome = action({ properties: [{ key: '$browser', value: ['Chrome', 'Safari'], operator: 'is_not' }] })
  t.ok(notChrome(event('e')), 'is_not includes events without the property')
  t.notOk(notChrome(event('e', { $browser: 'Safari' })))
  t.ok(action({ properties: [{ key: 'plan', value: 'PRO', operator: 'icontains' }] })(event('e', { plan: 'team-pro' })))
  const big = action({ properties: [{ key: 'amount', value: 10, operator: 'gt' }] })
  t.ok(big(event('e', { amount: 12.5 })))
  t.ok(big(event('e', { amount: '11' })), 'numeric text compares as a number')
  t.notOk(big(event('e', { amount: 'many' })))
  t.ok(action({ properties: [{ key: 'paid', value: true }] })(event('e', { paid: true })), 'booleans compare by their text')
  t.ok(action({ properties: [{ key: 'coupon', operator: 'is_set' }] })(event('e', { coupon: null })), 'is_set: the key is there, even null')
  t.ok(
    action({ properties: [{ type: 'OR', values: [{ key: 'a', value: '1' }, { key: 'b', value: '2' }] }] })(event('e', { b: '2' })),
    'groups nest',
  )
  t.throws(() => action({ properties: [{ key: 'email', value: 'x', type: 'person' }] }), { code: 'unsupported', message: /person property filters/ })
  const path = action({ properties: [{ key: 'path', value: '^/a/\\d+', operator: 'regex' }, { key: 'path', value: '/b$', operator: 'not_regex' }] })
  t.ok(path(event('e', { path: '/a/12/c' })), 'regex searches, not_regex')
  t.notOk(path(event('e', { path: '/a/12/b' })))
  t.notOk(path(event('e')), 'regex: a missing property matches nothing')
  t.throws(() => action({ properties: [{ key: 'path', value: '^(?=/a)', operator: 'regex' }] }), { message: /the regex "\^\(\?=\/a\)", which the stores can't run/ })
  const hogql = action({ properties: [{ key: "properties.$current_url ilike '%/pricing%' and properties.amount > 10", type: 'hogql' }] })
  t.ok(hogql(event('e', { $current_url: 'https://x.io/Pricing', amount: 12 })), 'a HogQL filter holds')
  t.notOk(hogql(event('e', { $current_url: 'https://x.io/Pricing', amount: 'n/a' })))
  t.throws(() => action({ properties: [{ key: 'person.properties.email = 1', type: 'hogql' }] }), { code: 'unsupported', message: /the HogQL filter "person.properties.email = 1" \(person properties\)/ })
  t.throws(() => action({ properties: [{ key: 'timestamp = 1', type: 'hogql' }] }), { code: 'unsupported', message: /the HogQL filter "timestamp = 1" \(Unknown field "timestamp"/ })
  const fields = action({ properties: [{ key: "distinct_id like 'user-%' and event != 'e'", type: 'hogql' }] })
  t.same([fields({ ...event('f'), distinct_id: 'user-1' }), fields({ ...event('e'), distinct_id: 'user-1' }), fields(event('f'))], [true, false, false], "a HogQL filter reads the event's name and distinct id")
})

t.test("LIKE's wildcards stay linear on hostile patterns", async (t) => {
  t.ok(like('abc', '%'))
  t.ok(like('', '%'))
  t.notOk(like('', '_'))
  t.ok(like('ÄBC', '%äb%', true), 'ILIKE lower-cases both sides')
  const started = process.hrtime.bigint()
  t.notOk(like('a'.repeat(5000), `${'%a'.repeat(50)}b`))
  t.ok(process.hrtime.bigint() - started < 1_000_000_000n)
})
