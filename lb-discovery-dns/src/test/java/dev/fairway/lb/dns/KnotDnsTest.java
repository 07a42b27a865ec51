package dev.fairway.lb.dns;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.SimpleResolver;

/**
 * Against a real DNS server: Knot DNS on loopback, serving a zone file the test writes and reloads.
 * Skipped without Knot on a developer's machine, failed without it on CI (see {@link Knot}).
 * Waits poll the source's state until a deadline; nothing asserts how long anything took.
 */
class KnotDnsTest {
  private static final Duration DEADLINE = Duration.ofSeconds(20);
  private static final String SRV = "_http._tcp.orders.svc.test";

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @BeforeEach
  void knotInstalled() {
    Knot.requireInstalled();
  }

  /** The zone svc.test: an SOA whose negative TTL is 2 s, then {@code records}. */
  static String zone(int serial, String... records) {
    return "$ORIGIN svc.test.\n$TTL 30\n"
        + "@ 3600 SOA ns.svc.test. admin.svc.test. " + serial + " 3600 600 86400 2\n"
        + "@ NS ns\nns A 127.0.0.1\n"
        + String.join("\n", records) + "\n";
  }

  private static List<String> ids(List<Target> targets) {
    return targets.stream().map(t -> t.id() + " w" + t.weight()).toList();
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + DEADLINE + ": " + what);
      }
      Thread.sleep(20);
    }
  }

  private static void awaitTargets(DnsTargetSource source, String... expected) throws InterruptedException {
    await("targets " + List.of(expected) + ", have " + ids(source.targets()),
        () -> ids(source.targets()).equals(List.of(expected)));
  }

  private double errors(String reason) {
    Counter c = registry.find("fairway.discovery.errors").tag("reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  private DnsTargetSource.Builder srv(Knot knot) {
    return DnsTargetSource.srv(SRV).resolver(knot.address()).meterRegistry(registry);
  }

  @Test
  void srv_givesTheZonesTargets_andFollowsEachReload() throws Exception {
    try (Knot knot = Knot.start("svc.test", zone(1,
            "_http._tcp.orders 1 SRV 10 3 8081 a.orders",
            "_http._tcp.orders 1 SRV 10 1 8082 b.orders",
            "_http._tcp.orders 1 SRV 20 1 8083 c.orders",
            "a.orders 1 A 127.0.0.2",
            "b.orders 1 AAAA ::1",
            "c.orders 1 A 127.0.0.3"));
        DnsTargetSource source = srv(knot).build();
        LoadBalancer lb = LoadBalancer.builder("orders").targets(source).build()) {
      List<Target> first = source.whenReady().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
      assertThat(ids(first)).containsExactly("127.0.0.2:8081 w3", "[::1]:8082 w1");
      assertThat(first.get(0).metadata()).isEqualTo(
          Map.of("dns.name", "a.orders.svc.test", "dns.priority", "10", "dns.weight", "3"));

      // A new port and weight for a, b gone.
      knot.reload(zone(2,
          "_http._tcp.orders 1 SRV 10 2 8084 a.orders",
          "_http._tcp.orders 1 SRV 20 1 8083 c.orders",
          "a.orders 1 A 127.0.0.2",
          "c.orders 1 A 127.0.0.3"));
      awaitTargets(source, "127.0.0.2:8084 w2");
      Pick pick = lb.pick();
      assertThat(pick.target().id()).isEqualTo("127.0.0.2:8084");
      pick.release();

      // Priority 10's only host loses its address: priority 20 takes over.
      knot.reload(zone(3,
          "_http._tcp.orders 1 SRV 10 2 8084 a.orders",
          "_http._tcp.orders 1 SRV 20 1 8083 c.orders",
          "c.orders 1 A 127.0.0.3"));
      awaitTargets(source, "127.0.0.3:8083 w1");
    }
  }

  @Test
  void servfail_keepsTheLastGoodList_andNxdomainThenEmptiesIt() throws Exception {
    try (Knot knot = Knot.start("svc.test", zone(1,
            "_http._tcp.orders 1 SRV 10 1 8081 a.orders",
            "a.orders 1 A 127.0.0.2"));
        DnsTargetSource source = srv(knot).build()) {
      assertThat(ids(source.whenReady().get(DEADLINE.toSeconds(), TimeUnit.SECONDS)))
          .containsExactly("127.0.0.2:8081 w1");

      knot.expire(); // Knot now answers SERVFAIL for the zone
      await("a SERVFAIL counted", () -> errors("servfail") >= 2);
      assertThat(ids(source.targets())).containsExactly("127.0.0.2:8081 w1");
      assertThat(source.stalenessNanos()).isPositive();

      knot.restore(zone(2, "a.orders 1 A 127.0.0.2")); // the SRV name is gone: NXDOMAIN
      awaitTargets(source);
      Counter emptied = registry.find("fairway.discovery.emptied").counter();
      assertThat(emptied).isNotNull();
      assertThat(emptied.count()).isEqualTo(1);
    }
  }

  @Test
  void timeout_keepsTheLastGoodList_untilTheServerAnswersAgain() throws Exception {
    try (Knot knot = Knot.start("svc.test", zone(1,
            "_http._tcp.orders 1 SRV 10 1 8081 a.orders",
            "a.orders 1 A 127.0.0.2"));
        DnsTargetSource source = srv(knot).queryTimeout(Duration.ofMillis(300)).build()) {
      assertThat(ids(source.whenReady().get(DEADLINE.toSeconds(), TimeUnit.SECONDS)))
          .containsExactly("127.0.0.2:8081 w1");

      knot.pause();
      try {
        await("a timeout counted", () -> errors("timeout") >= 2);
        assertThat(ids(source.targets())).containsExactly("127.0.0.2:8081 w1");
      } finally {
        knot.resume();
      }
      knot.reload(zone(2,
          "_http._tcp.orders 1 SRV 10 1 8085 a.orders",
          "a.orders 1 A 127.0.0.2"));
      awaitTargets(source, "127.0.0.2:8085 w1");
    }
  }

  @Test
  void addresses_giveTheNamesAAndAaaaRecords_andNxdomainEmpties() throws Exception {
    try (Knot knot = Knot.start("svc.test", zone(1, "web 1 A 127.0.0.5", "web 1 AAAA ::1"));
        DnsTargetSource source = DnsTargetSource.addresses("web.svc.test", 8080).resolver(knot.address())
            .meterRegistry(registry).build()) {
      assertThat(ids(source.whenReady().get(DEADLINE.toSeconds(), TimeUnit.SECONDS)))
          .containsExactly("127.0.0.5:8080 w1", "[::1]:8080 w1");
      knot.reload(zone(2, "web 1 A 127.0.0.6"));
      awaitTargets(source, "127.0.0.6:8080 w1");
      knot.reload(zone(3, "other 1 A 127.0.0.6"));
      awaitTargets(source);
    }
  }

  /**
   * The refresh waits exactly as long as the zone's TTLs say: the SRV record's 7 s (its host's
   * address, 12 s, came in the additional section, so nothing else is asked), then after a reload the
   * 5-minute bound for TTLs of an hour. Real server and resolver; the waits are recorded, not waited.
   */
  @Test
  void refresh_waitsTheZonesTtl_withinTheBounds() throws Exception {
    try (Knot knot = Knot.start("svc.test", zone(1,
        "_http._tcp.orders 7 SRV 10 1 8081 a.orders",
        "a.orders 12 A 127.0.0.2"))) {
      SteppedScheduler steps = new SteppedScheduler();
      Duration timeout = Duration.ofMillis(10_001); // no real reply on loopback takes that long
      DnsClient client = DnsClient.of(new SimpleResolver(knot.address()), timeout);
      try (DnsTargetSource source = DnsTargetSource.srv(SRV).queryTimeout(timeout)
          .testing(client, steps, System::nanoTime).build()) {
        assertThat(steps.nextRefresh(timeout).delayMillis).isEqualTo(7_000);
        assertThat(ids(source.targets())).containsExactly("127.0.0.2:8081 w1");

        knot.reload(zone(2,
            "_http._tcp.orders 3600 SRV 10 1 8082 a.orders",
            "a.orders 3600 A 127.0.0.2"));
        steps.fireLast();
        assertThat(steps.nextRefresh(timeout).delayMillis).isEqualTo(300_000);
        assertThat(ids(source.targets())).containsExactly("127.0.0.2:8082 w1");
        assertThat(steps.questionTimers).isEqualTo(2); // one SRV question per refresh, nothing else
      } finally {
        steps.close();
      }
    }
  }

  /**
   * Runs tasks on a real thread, but holds every scheduled one: the test reads its delay and fires it
   * when it wants. Question timers (delay = the query timeout) are counted and never fired.
   */
  private static final class SteppedScheduler implements Scheduler {
    private final ExecutorService thread = Executors.newSingleThreadExecutor();
    private final BlockingQueue<Step> steps = new LinkedBlockingQueue<>();
    private volatile Step last;
    int questionTimers;

    record Step(long delayMillis, Runnable task, CompletableFuture<Void> handle) {}

    @Override
    public void execute(Runnable task) {
      thread.execute(task);
    }

    @Override
    public Future<?> schedule(Runnable task, long delayNanos) {
      Step s = new Step(TimeUnit.NANOSECONDS.toMillis(delayNanos), task, new CompletableFuture<>());
      steps.add(s);
      return s.handle;
    }

    /** The next scheduled step that is not a question's timer. */
    Step nextRefresh(Duration timeout) throws InterruptedException {
      for (;;) {
        Step s = steps.poll(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        if (s == null) {
          throw new AssertionError("no refresh was scheduled");
        }
        if (s.delayMillis == timeout.toMillis()) {
          questionTimers++;
          continue;
        }
        last = s;
        return s;
      }
    }

    /** Runs the last refresh step now, on the thread. */
    void fireLast() {
      Step s = last;
      thread.execute(() -> {
        if (!s.handle.isCancelled()) {
          s.task.run();
        }
      });
    }

    void close() throws InterruptedException {
      thread.shutdownNow();
      thread.awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
