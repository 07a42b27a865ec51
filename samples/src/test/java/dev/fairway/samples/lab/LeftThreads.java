package dev.fairway.samples.lab;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** The threads a lab run started and left alive: what the smoke tests' "no thread left behind" checks read. */
final class LeftThreads {
  private LeftThreads() {}

  /**
   * The names of the live threads not in {@code before} and not named with one of the {@code
   * shared} prefixes (threads the whole JVM shares, which idle out on their own), polled until
   * there are none or {@code timeout} has passed. With {@code collect}, each poll first asks for a
   * garbage collection, for threads that end only once their owner is unreachable.
   */
  static List<String> awaitNone(Set<Thread> before, List<String> shared, Duration timeout, Duration poll,
      boolean collect) throws InterruptedException {
    List<String> left = new ArrayList<>();
    long deadline = System.nanoTime() + timeout.toNanos();
    do {
      left.clear();
      if (collect) {
        System.gc();
      }
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (t.isAlive() && !before.contains(t) && shared.stream().noneMatch(t.getName()::startsWith)) {
          left.add(t.getName());
        }
      }
      if (left.isEmpty()) {
        break;
      }
      Thread.sleep(poll.toMillis());
    } while (System.nanoTime() < deadline);
    return left;
  }
}
