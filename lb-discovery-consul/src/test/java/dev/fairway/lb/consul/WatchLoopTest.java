package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.ScriptedHttp.headers;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpTimeoutException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The watch loop on fake time: every request it sends and every wait it asks for, in order. No
 * sockets, no sleeps; the backoff's random draw is fixed at 0.5, so the n-th consecutive error waits
 * exactly half its cap (500 ms, 1 s, 2 s, ...).
 */
class WatchLoopTest {
  private static final String BASE = "/v1/health/service/orders";

  private final ScriptedHttp http = new ScriptedHttp();
  private final ManualScheduler scheduler = new ManualScheduler();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<String> warnings = new CopyOnWriteArrayList<>();
  private final Logger jul = Logger.getLogger(ConsulTargetSource.class.getName());
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord r) {
      if (r.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue()) {
        warnings.add(new java.util.logging.SimpleFormatter().formatMessage(r));
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  WatchLoopTest() {
    jul.addHandler(capture);
  }

  @AfterEach
  void detach() {
    jul.removeHandler(capture);
  }

  static String entry(String id, String node, String address, int port, String status) {
    return "{\"Node\":{\"Node\":\"" + node + "\",\"Address\":\"" + address + "\"},"
        + "\"Service\":{\"ID\":\"" + id + "\",\"Service\":\"orders\",\"Address\":\"\",\"Port\":" + port + "},"
        + "\"Checks\":[{\"CheckID\":\"serfHealth\",\"Status\":\"passing\"},"
        + "{\"CheckID\":\"service:" + id + "\",\"Status\":\"" + status + "\"}]}";
  }

  static final String O1 = entry("o1", "n1", "10.0.0.1", 80, "passing");
  static final String O2 = entry("o2", "n2", "10.0.0.2", 80, "passing");
  static final String O3 = entry("o3", "n3", "10.0.0.3", 80, "passing");

  static String list(String... entries) {
    return "[" + String.join(",", entries) + "]";
  }

  private ConsulDiscovery discovery() {
    return TestSupport.fakeTime(http, scheduler);
  }

  private double count(String meter, String reason) {
    Counter c = registry.find(meter).tags("service", "orders", "reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  private static List<String> ids(ConsulTargetSource s) {
    return s.targets().stream().map(Target::id).toList();
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  void blockingLoop_changesGoOutAtOnce_andTheDefaultBucketSpacesSameListWakeUps500msApart() {
    ConsulTargetSource s = discovery().source("orders").closeness(false).meterRegistry(registry).build();

    assertThat(http.paths()).containsExactly(BASE);
    assertThat(http.last().timeout()).isEqualTo(Duration.ofMillis(300_000 + 18_750 + 30_000));
    http.ok(10, list(O1));
    assertThat(ids(s)).containsExactly("o1@n1");
    assertThat(s.whenReady()).isCompleted();
    assertThat(http.paths()).containsExactly(BASE, BASE + "?index=10&wait=5m");

    http.ok(11, list(O1, O2)); // a change: the next query at once
    http.ok(12, list(O1, O2, O3));
    assertThat(ids(s)).containsExactly("o1@n1", "o2@n2", "o3@n3");
    assertThat(http.paths()).hasSize(4).endsWith(BASE + "?index=12&wait=5m");
    assertThat(scheduler.waitsMillis()).isEmpty();

    http.ok(13, list(O1, O2, O3)); // the same list under a new index: the burst of 2 ...
    http.ok(14, list(O3, O2, O1)); // (order ignored: still the same list)
    assertThat(http.paths()).hasSize(6).endsWith(BASE + "?index=14&wait=5m");
    http.ok(15, list(O1, O2, O3)); // ... is spent: the next query waits 500 ms
    assertThat(http.count()).isEqualTo(6);
    assertThat(scheduler.waitsMillis()).containsExactly(500L);

    scheduler.runNext();
    assertThat(http.last().pathAndQuery()).isEqualTo(BASE + "?index=15&wait=5m");
    http.ok(16, list(O1, O2, O3));
    assertThat(scheduler.waitsMillis()).as("a hot index: one query per 500 ms")
        .containsExactly(500L, 500L);
    scheduler.runNext();
    http.ok(17, list(O1, O2)); // a change while the bucket is empty: not held back
    assertThat(http.paths()).hasSize(9).endsWith(BASE + "?index=17&wait=5m");
    assertThat(scheduler.waitsMillis()).hasSize(2);

    scheduler.advance(Duration.ofMinutes(1).toNanos()); // a quiet minute refills the burst, not beyond
    http.ok(18, list(O1, O2));
    http.ok(19, list(O1, O2));
    assertThat(http.paths()).hasSize(11).endsWith(BASE + "?index=19&wait=5m");
    http.ok(20, list(O1, O2));
    assertThat(scheduler.waitsMillis()).containsExactly(500L, 500L, 500L);
    assertThat(registry.get("fairway.discovery.updates").counter().count()).isEqualTo(4.0);
    assertThat(registry.get("fairway.discovery.throttled").tag("reason", "unchanged").counter().count())
        .isEqualTo(3.0);
    assertThat(registry.find("fairway.discovery.errors").counters()).isEmpty();
  }

  static Stream<Arguments> faults() {
    List<Arguments> a = new ArrayList<>();
    a.add(fault("500 No cluster leader", "http_500", h -> h.reply(500, headers(), "No cluster leader")));
    a.add(fault("429", "http_429", h -> h.reply(429, headers(), "rate limit exceeded")));
    a.add(fault("503", "http_503", h -> h.reply(503, headers(), "Service Unavailable")));
    a.add(fault("403 ACL not found", "http_403", h -> h.reply(403, headers(), "ACL not found")));
    a.add(fault("400", "http_400", h -> h.reply(400, headers(), "Invalid wait time")));
    a.add(fault("502 from a proxy", "http_502", h -> h.reply(502, headers("Content-Type", "text/html"),
        "<html><body>502 Bad Gateway</body></html>")));
    a.add(fault("index 0", "missing_index", h -> h.reply(200, headers("X-Consul-Index", "0"), list(O1))));
    a.add(fault("no index", "missing_index", h -> h.reply(200, headers(), list(O1))));
    a.add(fault("index 12abc", "bad_index", h -> h.reply(200, headers("X-Consul-Index", "12abc"), list(O1))));
    a.add(fault("malformed JSON", "malformed",
        h -> h.reply(200, headers("X-Consul-Index", "11"), "[{\"Node\": {\"Node\": \"n1\", }, ]]")));
    a.add(fault("truncated JSON", "malformed",
        h -> h.reply(200, headers("X-Consul-Index", "11"), list(O1, O2).substring(0, 40))));
    a.add(fault("null", "null_body", h -> h.reply(200, headers("X-Consul-Index", "11"), "null")));
    a.add(fault("an object", "malformed", h -> h.reply(200, headers("X-Consul-Index", "11"), "{}")));
    a.add(fault("HTML 200", "malformed", h -> h.reply(200, headers("X-Consul-Index", "11"), "<html>Welcome</html>")));
    a.add(fault("connection refused", "connect", h -> h.fail(new ConnectException("Connection refused"))));
    a.add(fault("wrapped refused", "connect",
        h -> h.fail(new CompletionException(new ConnectException("Connection refused")))));
    a.add(fault("request timed out", "timeout", h -> h.fail(new HttpTimeoutException("request timed out"))));
    a.add(fault("closed mid-reply", "io", h -> h.fail(new IOException("fixed content-length: 812, bytes received: 406"))));
    a.add(fault("untrusted certificate", "certificate",
        h -> h.fail(new SSLHandshakeException("PKIX path building failed") {
          {
            initCause(new CertificateException("unable to find valid certification path"));
          }
        })));
    return a.stream();
  }

  private static Arguments fault(String name, String reason, Consumer<ScriptedHttp> answer) {
    return Arguments.of(name, reason, answer);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("faults")
  void fault_keepsTheList_backsOffDoubling_readsFresh_andRecovers(String name, String reason,
      Consumer<ScriptedHttp> answer) {
    ConsulTargetSource s = discovery().source("orders").closeness(false).meterRegistry(registry)
        .rateLimit(1000, Duration.ofMillis(1)).build();
    http.ok(10, list(O1, O2));
    List<List<Target>> seen = new ArrayList<>();
    s.subscribe(seen::add);

    answer.accept(http);
    assertThat(ids(s)).containsExactly("o1@n1", "o2@n2");
    assertThat(count("fairway.discovery.errors", reason)).isEqualTo(1.0);
    assertThat(scheduler.waitsMillis()).containsExactly(500L);
    assertThat(http.count()).as("nothing is sent during the backoff").isEqualTo(2);

    scheduler.runNext();
    assertThat(http.last().pathAndQuery()).as("a fresh, non-blocking read").isEqualTo(BASE);
    answer.accept(http);
    assertThat(scheduler.waitsMillis()).containsExactly(500L, 1_000L);
    scheduler.runNext();

    http.ok(12, list(O1, O2, O3));
    assertThat(ids(s)).containsExactly("o1@n1", "o2@n2", "o3@n3");
    assertThat(http.last().pathAndQuery()).isEqualTo(BASE + "?index=12&wait=5m");
    assertThat(seen).hasSize(2);
    answer.accept(http);
    assertThat(scheduler.waitsMillis()).as("a success resets the backoff").containsExactly(500L, 1_000L, 500L);
    assertThat(count("fairway.discovery.errors", reason)).isEqualTo(3.0);
  }

  @Test
  void indexGoingBackwards_usesTheReply_thenRestartsFromZeroAfterABackoff() {
    ConsulTargetSource s = discovery().source("orders").closeness(false).meterRegistry(registry)
        .rateLimit(1000, Duration.ofMillis(1)).build();
    http.ok(16, list(O1));
    http.ok(3, list(O1, O2)); // a restored snapshot

    assertThat(ids(s)).containsExactly("o1@n1", "o2@n2");
    assertThat(count("fairway.discovery.errors", "index_backwards")).isEqualTo(1.0);
    assertThat(scheduler.waitsMillis()).containsExactly(500L);
    scheduler.runNext();
    assertThat(http.paths()).containsExactly(BASE, BASE + "?index=16&wait=5m", BASE);
    http.ok(4, list(O1, O2));
    assertThat(http.last().pathAndQuery()).isEqualTo(BASE + "?index=4&wait=5m");
  }

  @Test
  void aclFilteredEmptyReply_keepsTheLastList_warnsOnceWithTheFix_countsEachReply_andKeepsBlocking() {
    ConsulTargetSource s = discovery().source("orders").closeness(false).meterRegistry(registry).rateLimit(1000, Duration.ofMillis(1))
        .build();
    http.ok(10, list(O1, O2));
    http.reply(200, headers("X-Consul-Index", "11", "X-Consul-Results-Filtered-By-ACLs", "true"), "[]");
    http.reply(200, headers("X-Consul-Index", "12", "X-Consul-Results-Filtered-By-ACLs", "true"), "[]");

    assertThat(ids(s)).containsExactly("o1@n1", "o2@n2");
    assertThat(count("fairway.discovery.errors", "acl_filtered")).isEqualTo(2.0);
    assertThat(registry.get("fairway.discovery.emptied").counter().count()).isZero();
    assertThat(scheduler.waitsMillis()).as("a valid reply: no backoff").isEmpty();
    assertThat(http.last().pathAndQuery()).isEqualTo(BASE + "?index=12&wait=5m");
    assertThat(warnings).filteredOn(w -> w.contains("the token lacks service:read on orders")).hasSize(1);

    http.ok(13, list(O1, O2, O3)); // the token was granted service:read
    assertThat(ids(s)).containsExactly("o1@n1", "o2@n2", "o3@n3");
  }

  @Test
  void aclFilteredFirstReply_isNotReady_andBlocksOnItsIndex() {
    ConsulTargetSource s = discovery().source("orders").closeness(false).build();
    http.reply(200, headers("X-Consul-Index", "7", "X-Consul-Results-Filtered-By-ACLs", "true"), "[]");

    assertThat(s.whenReady()).isNotDone();
    assertThat(s.targets()).isEmpty();
    assertThat(http.last().pathAndQuery()).isEqualTo(BASE + "?index=7&wait=5m");
  }

  @Test
  void criticalInstances_arePassedOnAsUnhealthy_unlessPassingOnly() {
    ConsulTargetSource all = discovery().source("orders").closeness(false).build();
    http.ok(10, list(entry("o1", "n1", "10.0.0.1", 80, "critical"), O2));

    assertThat(all.targets()).extracting(Target::id, Target::healthy)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("o1@n1", false), org.assertj.core.groups.Tuple.tuple("o2@n2", true));
  }

  @Test
  void unexpectedExceptionInAStep_isLoggedCountedAndBackedOff_andTheLoopGoesOn() {
    AtomicBoolean boom = new AtomicBoolean();
    ConsulDiscovery d = new ConsulDiscovery(new AgentConfig("http://127.0.0.1:8500", null, null, null,
        Duration.ofSeconds(1), null, null), http, scheduler, () -> {
          if (boom.getAndSet(false)) {
            throw new IllegalStateException("a bug outside the query's try");
          }
          return scheduler.nanoTime();
        }, () -> 0.5);
    ConsulTargetSource s = d.source("orders").closeness(false).meterRegistry(registry)
        .rateLimit(1000, Duration.ofMillis(1)).build();
    http.ok(10, list(O1));

    boom.set(true);
    http.ok(11, list(O1, O2)); // the clock read in accept() throws
    assertThat(ids(s)).containsExactly("o1@n1");
    assertThat(count("fairway.discovery.errors", "unexpected")).isEqualTo(1.0);
    assertThat(scheduler.waitsMillis()).containsExactly(500L);

    scheduler.runNext();
    assertThat(http.last().pathAndQuery()).isEqualTo(BASE);
    http.throwOnNextGet(new IllegalArgumentException("a transport that throws instead of failing the future"));
    http.ok(12, list(O1, O2));
    assertThat(ids(s)).containsExactly("o1@n1", "o2@n2");
    assertThat(count("fairway.discovery.errors", "unexpected")).isEqualTo(2.0);
    assertThat(scheduler.waitsMillis()).containsExactly(500L, 500L);
    scheduler.runNext();
    assertThat(http.last().pathAndQuery()).isEqualTo(BASE);
    assertThat(warnings).anyMatch(w -> w.contains("unexpected failure in the Consul watch"));
  }

  @Test
  void queryOptions_areSentAsConsulSpellsThem_andNearIsNever() {
    discovery().source("orders").closeness(false).passingOnly().tag("v2").tag("eu").datacenter("dc2")
        .filter("Service.Meta.env == \"prod\"").nodeMeta("rack", "r1").namespace("team-a").partition("p1")
        .peer("east").cached().build();

    assertThat(http.last().pathAndQuery()).isEqualTo(BASE + "?passing&tag=v2&tag=eu&dc=dc2"
        + "&filter=Service.Meta.env+%3D%3D+%22prod%22&node-meta=rack%3Ar1&ns=team-a&partition=p1&peer=east&cached");
    assertThat(http.last().pathAndQuery()).doesNotContain("near");
  }

  @Test
  void namespaceAndPartition_defaultToTheAgents() {
    ConsulDiscovery d = new ConsulDiscovery(new AgentConfig("http://127.0.0.1:8500", null, null, null,
        Duration.ofSeconds(1), "from-env", "part-env"), http, scheduler, scheduler::nanoTime, () -> 0.5);
    d.source("orders").closeness(false).build();
    d.source("orders").closeness(false).namespace("mine").build();

    assertThat(http.paths()).containsExactly(BASE + "?ns=from-env&partition=part-env",
        BASE + "?ns=mine&partition=part-env");
  }

  @Test
  void cached_theCacheAgeCountsIntoStaleness() {
    discovery().source("orders").closeness(false).cached().meterRegistry(registry).build();
    http.reply(200, headers("X-Consul-Index", "10", "X-Cache", "HIT", "Age", "7"), list(O1));

    assertThat(registry.get("fairway.discovery.staleness").timeGauge().value(TimeUnit.SECONDS)).isEqualTo(7.0);
    scheduler.advance(Duration.ofSeconds(3).toNanos());
    assertThat(registry.get("fairway.discovery.staleness").timeGauge().value(TimeUnit.SECONDS)).isEqualTo(10.0);
  }

  @Test
  void stale_aReplyTooFarBehindTheLeader_isRepeatedAtOnceAgainstTheLeader() {
    ConsulTargetSource s = discovery().source("orders").closeness(false).stale(Duration.ofSeconds(2)).meterRegistry(registry)
        .rateLimit(1000, Duration.ofMillis(1)).build();
    assertThat(http.last().pathAndQuery()).isEqualTo(BASE + "?stale");

    http.reply(200, headers("X-Consul-Index", "10", "X-Consul-Lastcontact", "5000"), list(O1));
    assertThat(s.targets()).isEmpty();
    assertThat(count("fairway.discovery.errors", "too_stale")).isEqualTo(1.0);
    assertThat(http.last().pathAndQuery()).as("consistent read, at once").isEqualTo(BASE);
    assertThat(scheduler.waitsMillis()).isEmpty();

    http.ok(11, list(O1));
    assertThat(ids(s)).containsExactly("o1@n1");
    assertThat(http.last().pathAndQuery()).isEqualTo(BASE + "?stale&index=11&wait=5m");
    http.reply(200, headers("X-Consul-Index", "12", "X-Consul-Lastcontact", "1500"), list(O1, O2));
    assertThat(ids(s)).as("within maxStale: used").containsExactly("o1@n1", "o2@n2");
  }

  @Test
  void close_cancelsTheQueryInFlight_andTheWaitingStep() {
    ConsulTargetSource s = discovery().source("orders").closeness(false).rateLimit(1000, Duration.ofMillis(1)).build();
    http.ok(10, list(O1));
    ScriptedHttp.Call blocking = http.last();
    s.close();
    assertThat(blocking.reply()).isCancelled();

    ConsulTargetSource t = discovery().source("orders").closeness(false).rateLimit(1000, Duration.ofMillis(1)).build();
    http.reply(500, headers(), "No cluster leader");
    assertThat(scheduler.pending()).isEqualTo(1);
    t.close();
    assertThat(scheduler.pending()).isZero();
  }
}
