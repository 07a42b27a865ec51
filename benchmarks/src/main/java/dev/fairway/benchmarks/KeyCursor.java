package dev.fairway.benchmarks;

import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * One thread's walk over pre-generated Zipf keys: each benchmark thread gets its own key sequence
 * (another seed), read by a thread-local index, so key generation costs nothing in the measurement
 * and threads do not share a cursor.
 */
@State(Scope.Thread)
public class KeyCursor {
  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final int MASK = Fixtures.KEY_SAMPLES - 1;

  String[] keys;
  int index;

  @Setup
  public void setUp() {
    keys = Fixtures.zipfKeys(0x5EED_0000L + THREADS.getAndIncrement());
  }

  String next() {
    return keys[index++ & MASK];
  }

  int nextIndex() {
    return index++ & MASK;
  }
}
