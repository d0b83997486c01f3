import { sqlConformance } from './support/conformance.js';

sqlConformance('postgres');
