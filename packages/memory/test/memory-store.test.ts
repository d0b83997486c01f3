import { storeTestSuite } from '@mailroom/core/testing';
import { memoryStore } from '../src/index.js';

storeTestSuite('memory', () => memoryStore());
