/** SPEC §12 crash safety with the embedded store (the scenarios: crash-scenarios.ts). */
import t from 'tap'
import { crashScenarios } from './crash-scenarios.js'

crashScenarios(t, 'embedded')
