import t from 'tap'
import { usageDashboardSuite } from './usage-dashboard.js'

usageDashboardSuite(t, () => ({}))
