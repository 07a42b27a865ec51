package dev.fairway.lb.kubernetes;

import static org.assertj.core.api.Assertions.fail;

import dev.fairway.lb.Target;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/** Every list a source publishes, in order, for tests to wait on with a bound. */
final class Lists implements AutoCloseable {
  static final Duration MAX = Duration.ofSeconds(20);

  final BlockingQueue<List<Target>> seen = new LinkedBlockingQueue<>();
  private final AutoCloseable subscription;

  Lists(KubernetesTargetSource source) {
    this.subscription = source.subscribe(seen::add);
  }

  /** The next published list that satisfies {@code p} (earlier ones are dropped); fails after {@link #MAX}. */
  List<Target> next(String what, Predicate<List<Target>> p) throws InterruptedException {
    long deadline = System.nanoTime() + MAX.toNanos();
    while (true) {
      List<Target> l = seen.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (l == null) {
        fail("no published list within " + MAX.toSeconds() + " s: " + what);
      }
      if (p.test(l)) {
        return l;
      }
    }
  }

  static List<String> ids(List<Target> targets) {
    return targets.stream().map(Target::id).sorted().toList();
  }

  List<Target> nextIds(String... ids) throws InterruptedException {
    List<String> want = List.of(ids).stream().sorted().toList();
    return next("ids " + want, l -> ids(l).equals(want));
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + MAX.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within " + MAX.toSeconds() + " s: " + what);
      }
      Thread.sleep(5);
    }
  }

  @Override
  public void close() throws Exception {
    subscription.close();
  }
}
