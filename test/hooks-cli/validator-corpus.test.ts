/**
 * The command validator against the corpus, shard 1 of 3 (validator-corpus.ts
 * says what is run and why the corpus is split).
 */
import t from 'tap';
import { corpusShardTest } from './validator-corpus';

corpusShardTest(t, 0);
