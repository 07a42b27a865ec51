package dev.fairway.lb.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A bounded wait for a condition that real threads and sockets make true: for the few end-to-end
 * hedging tests whose order is fixed by the test but whose completion lands on another thread. Fails
 * naming {@code what} after 5 s.
 */
public final class Eventually {
  private Eventually() {}

  public static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as(what).isNegative();
      Thread.sleep(10);
    }
  }
}
