package dev.fairway.lb;

import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;

/** Randomness for the strategies; injected so tests can replay exact sequences. */
interface RandomSource {
  /** Uniform in {@code [0, bound)}; {@code bound > 0}. */
  int nextInt(int bound);

  /** Uniform in {@code [0, 1)}. */
  double nextDouble();

  RandomSource THREAD_LOCAL =
      new RandomSource() {
        @Override
        public int nextInt(int bound) {
          return ThreadLocalRandom.current().nextInt(bound);
        }

        @Override
        public double nextDouble() {
          return ThreadLocalRandom.current().nextDouble();
        }
      };

  /** A deterministic source for tests; not thread-safe. */
  static RandomSource seeded(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    return new RandomSource() {
      @Override
      public int nextInt(int bound) {
        return random.nextInt(bound);
      }

      @Override
      public double nextDouble() {
        return random.nextDouble();
      }
    };
  }
}
