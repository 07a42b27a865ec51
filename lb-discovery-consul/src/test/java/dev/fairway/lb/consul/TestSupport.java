package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.fail;

import dev.fairway.lb.Target;
import dev.fairway.lb.consul.fake.FakeConsul;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/** Shared helpers: a fast-configured builder on real sockets, a fake-time discovery, bounded polling. */
final class TestSupport {
  private TestSupport() {}

  /**
   * For end-to-end tests on real sockets: short waits, a fast backoff, the token bucket opened wide
   * (its default is asserted on fake time) and an empty environment, so nothing on the machine leaks in.
   */
  static ConsulTargetSource.Builder fast(FakeConsul fake, String service) {
    return fast(fake, service, Duration.ofSeconds(2));
  }

  static ConsulTargetSource.Builder fast(FakeConsul fake, String service, Duration wait) {
    return ConsulTargetSource.builder(service)
        .environment(Map.of())
        .consulUrl(fake.url())
        .waitTime(wait)
        .backoff(Duration.ofMillis(50), Duration.ofMillis(400))
        .rateLimit(1000, Duration.ofMillis(1));
  }

  /** A discovery whose steps run on {@code scheduler}'s fake time and whose requests {@code http} answers. */
  static ConsulDiscovery fakeTime(ScriptedHttp http, ManualScheduler scheduler) {
    AgentConfig agent = new AgentConfig("http://127.0.0.1:8500", null, null, null, Duration.ofSeconds(1), null, null);
    return new ConsulDiscovery(agent, http, scheduler, scheduler::nanoTime, () -> 0.5);
  }

  /** A plain GET (no token), for tests that read the fake's replies as they are; fails on any error. */
  static String httpGet(String url) throws Exception {
    java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
        java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    return r.body();
  }

  /** Polls every 5 ms until the condition holds; fails after {@code max}. Returns the elapsed time. */
  static Duration await(Duration max, String what, BooleanSupplier condition) {
    long start = System.nanoTime();
    long deadline = start + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("not within " + max.toMillis() + " ms: " + what);
      }
      sleep(5);
    }
    return Duration.ofNanos(System.nanoTime() - start);
  }

  /** Polls until the value satisfies the condition; fails with the last value after {@code max}. */
  static <T> T awaitValue(Duration max, String what, Supplier<T> value, java.util.function.Predicate<T> ok) {
    long deadline = System.nanoTime() + max.toNanos();
    T v = value.get();
    while (!ok.test(v)) {
      if (System.nanoTime() > deadline) {
        fail("not within " + max.toMillis() + " ms: " + what + "; last value: " + v);
      }
      sleep(5);
      v = value.get();
    }
    return v;
  }

  static void sleep(long millis) {
    try {
      TimeUnit.MILLISECONDS.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * The service-id part of each target id, sorted: {@code o1@node-o1} reads {@code o1}. The full
   * {@code <Service.ID>@<Node>} form is asserted where ids are the subject.
   */
  static List<String> ids(List<Target> targets) {
    return targets.stream().map(t -> t.id().substring(0, t.id().lastIndexOf('@'))).sorted()
        .collect(Collectors.toList());
  }

  static List<Thread> consulThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("fairway-consul-") && t.isAlive())
        .collect(Collectors.toList());
  }
}
