package dev.fairway.lb.dns;

import static dev.fairway.lb.dns.ScriptedDns.NEVER;
import static dev.fairway.lb.dns.ScriptedDns.a;
import static dev.fairway.lb.dns.ScriptedDns.aaaa;
import static dev.fairway.lb.dns.ScriptedDns.answer;
import static dev.fairway.lb.dns.ScriptedDns.answerWithAdditional;
import static dev.fairway.lb.dns.ScriptedDns.cname;
import static dev.fairway.lb.dns.ScriptedDns.failure;
import static dev.fairway.lb.dns.ScriptedDns.rcode;
import static dev.fairway.lb.dns.ScriptedDns.soa;
import static dev.fairway.lb.dns.ScriptedDns.srv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;

/**
 * The refresh cycle on a manual clock with scripted replies: what is asked, what is published, and
 * exactly how long each wait is.
 */
class DnsTargetSourceTest {
  private static final String SRV = "_http._tcp.orders.svc.test.";
  private static final String Q_SRV = SRV + " SRV";

  private final ManualScheduler clock = new ManualScheduler();
  private final ScriptedDns dns = new ScriptedDns();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<DnsTargetSource> sources = new ArrayList<>();

  @AfterEach
  void closeSources() {
    sources.forEach(DnsTargetSource::close);
  }

  private DnsTargetSource start(DnsTargetSource.Builder b) {
    DnsTargetSource s = b.meterRegistry(registry).service("orders").testing(dns, clock, clock::nanoTime).build();
    sources.add(s);
    return s;
  }

  private static List<String> ids(List<Target> targets) {
    return targets.stream().map(t -> t.id() + " w" + t.weight()).toList();
  }

  private double count(String meter, String reason) {
    Counter c = registry.find(meter).tag("service", "orders").tag("reason", reason).counter();
    return c == null ? 0 : c.count();
  }

  private double counter(String meter) {
    Counter c = registry.find(meter).tag("service", "orders").counter();
    return c == null ? 0 : c.count();
  }

  private double stalenessSeconds() {
    TimeGauge g = registry.find("fairway.discovery.staleness").tag("service", "orders").timeGauge();
    assertThat(g).as("staleness time gauge").isNotNull();
    return g.value(TimeUnit.SECONDS);
  }

  /** SRV with TTL 60 naming a (A, TTL 12) and b (AAAA only, TTL 30): both asked, lowest TTL wins. */
  @Test
  void srv_resolvesEachHost_andRefreshesAtTheLowestTtlOfEveryRecordUsed() throws Exception {
    dns.on(Q_SRV, answer(srv(SRV, 60, 10, 3, 8081, "a.svc.test."), srv(SRV, 60, 10, 1, 8082, "b.svc.test."),
            srv(SRV, 60, 20, 1, 8083, "c.svc.test.")))
        .on("a.svc.test. A", answer(a("a.svc.test.", 12, "10.0.0.1")))
        .on("a.svc.test. AAAA", rcode(Rcode.NOERROR, soa("svc.test.", 300, 20)))
        .on("b.svc.test. A", rcode(Rcode.NOERROR, soa("svc.test.", 300, 45)))
        .on("b.svc.test. AAAA", answer(aaaa("b.svc.test.", 30, "fd00::2")));
    DnsTargetSource source = start(DnsTargetSource.srv("_http._tcp.orders.svc.test"));

    assertThat(source.whenReady().getNow(null)).isNotNull();
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8081 w3", "[fd00::2]:8082 w1");
    assertThat(dns.takeAsked()).containsExactly(Q_SRV, "a.svc.test. A", "a.svc.test. AAAA", "b.svc.test. A",
        "b.svc.test. AAAA"); // c, priority 20, is not needed
    assertThat(clock.pending()).isEqualTo(1); // the answered questions' timers are gone
    assertThat(clock.nextInMillis()).isEqualTo(12_000);
    assertThat(counter("fairway.discovery.updates")).isEqualTo(1);
  }

  @Test
  void srv_takesAddressesFromTheAdditionalSection_withoutAskingForThem() {
    dns.on(Q_SRV, answerWithAdditional(new Record[] {srv(SRV, 30, 10, 1, 8081, "a.svc.test.")},
        a("a.svc.test.", 20, "10.0.0.1"), aaaa("a.svc.test.", 25, "fd00::1")));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));

    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8081 w1", "[fd00::1]:8081 w1");
    assertThat(dns.takeAsked()).containsExactly(Q_SRV);
    assertThat(clock.nextInMillis()).isEqualTo(20_000);
  }

  @Test
  void srv_fallsBackToTheNextPriority_whenTheLowestHasNoAddress() {
    dns.on(Q_SRV, answer(srv(SRV, 30, 10, 5, 8081, "gone.svc.test."), srv(SRV, 30, 20, 1, 8082, "b.svc.test.")))
        .on("gone.svc.test. A", rcode(Rcode.NXDOMAIN, soa("svc.test.", 300, 10)))
        .on("gone.svc.test. AAAA", rcode(Rcode.NXDOMAIN, soa("svc.test.", 300, 10)))
        .on("b.svc.test. A", answer(a("b.svc.test.", 30, "10.0.0.2")))
        .on("b.svc.test. AAAA", rcode(Rcode.NOERROR, soa("svc.test.", 300, 30)));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));

    assertThat(ids(source.targets())).containsExactly("10.0.0.2:8082 w1");
    assertThat(count("fairway.discovery.skipped", "no_address")).isEqualTo(1);
    assertThat(clock.nextInMillis()).isEqualTo(10_000); // gone's NXDOMAIN is re-checked first
  }

  @Test
  void srv_recordsWithDotOrPortZero_giveNoTarget() {
    dns.on(Q_SRV, answer(srv(SRV, 30, 10, 1, 0, "a.svc.test."), srv(SRV, 30, 10, 0, 0, ".")));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));

    assertThat(source.targets()).isEmpty();
    assertThat(source.whenReady().getNow(null)).isEmpty();
    assertThat(count("fairway.discovery.skipped", "port_zero")).isEqualTo(1);
    assertThat(dns.takeAsked()).containsExactly(Q_SRV);
  }

  @Test
  void ttl_isKeptWithinTheBounds() {
    dns.on(Q_SRV, answerWithAdditional(new Record[] {srv(SRV, 0, 10, 1, 8081, "a.svc.test.")},
            a("a.svc.test.", 0, "10.0.0.1")),
        answerWithAdditional(new Record[] {srv(SRV, 86_400, 10, 1, 8081, "a.svc.test.")},
            a("a.svc.test.", 86_400, "10.0.0.1")));
    start(DnsTargetSource.srv(SRV));
    assertThat(clock.nextInMillis()).isEqualTo(1_000); // TTL 0: the lower bound
    clock.runNext();
    assertThat(clock.nextInMillis()).isEqualTo(300_000); // a day: the upper bound
  }

  @Test
  void ttl_isKeptWithinConfiguredBounds() {
    dns.on(Q_SRV, answerWithAdditional(new Record[] {srv(SRV, 0, 10, 1, 8081, "a.svc.test.")},
            a("a.svc.test.", 0, "10.0.0.1")),
        answerWithAdditional(new Record[] {srv(SRV, 3_600, 10, 1, 8081, "a.svc.test.")},
            a("a.svc.test.", 3_600, "10.0.0.1")));
    start(DnsTargetSource.srv(SRV).refreshBounds(java.time.Duration.ofSeconds(5), java.time.Duration.ofMinutes(1)));
    assertThat(clock.nextInMillis()).isEqualTo(5_000);
    clock.runNext();
    assertThat(clock.nextInMillis()).isEqualTo(60_000);
  }

  @Test
  void servfail_keepsTheLastGoodList_retriesDoubling_andStalenessGrows() {
    dns.on(Q_SRV, answerWithAdditional(new Record[] {srv(SRV, 30, 10, 1, 8081, "a.svc.test.")},
            a("a.svc.test.", 30, "10.0.0.1")),
        rcode(Rcode.SERVFAIL), rcode(Rcode.SERVFAIL), rcode(Rcode.SERVFAIL), rcode(Rcode.SERVFAIL),
        rcode(Rcode.SERVFAIL), rcode(Rcode.SERVFAIL), rcode(Rcode.SERVFAIL),
        answerWithAdditional(new Record[] {srv(SRV, 30, 10, 1, 8082, "a.svc.test.")},
            a("a.svc.test.", 30, "10.0.0.1")));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));
    List<List<Target>> heard = new ArrayList<>();
    source.subscribe(heard::add);
    assertThat(clock.nextInMillis()).isEqualTo(30_000);
    assertThat(stalenessSeconds()).isEqualTo(0);

    List<Long> waits = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      clock.runNext();
      waits.add(clock.nextInMillis());
      assertThat(ids(source.targets())).containsExactly("10.0.0.1:8081 w1");
    }
    assertThat(waits).containsExactly(1_000L, 2_000L, 4_000L, 8_000L, 16_000L, 30_000L, 30_000L);
    assertThat(count("fairway.discovery.errors", "servfail")).isEqualTo(7);
    assertThat(stalenessSeconds()).isEqualTo(30 + 1 + 2 + 4 + 8 + 16 + 30);

    clock.runNext(); // answers again, with a new port
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8082 w1");
    assertThat(stalenessSeconds()).isEqualTo(0);
    assertThat(clock.nextInMillis()).isEqualTo(30_000);
    assertThat(heard).hasSize(2); // the current list at subscribe, then the new port; no failure was heard
  }

  @Test
  void timeout_keepsTheLastGoodList_andIsCounted() {
    dns.on(Q_SRV, answerWithAdditional(new Record[] {srv(SRV, 30, 10, 1, 8081, "a.svc.test.")},
        a("a.svc.test.", 30, "10.0.0.1")), NEVER);
    DnsTargetSource source = start(DnsTargetSource.srv(SRV).queryTimeout(java.time.Duration.ofMillis(2_500)));
    clock.runNext(); // the second refresh asks; the reply never comes
    assertThat(clock.nextInMillis()).isEqualTo(2_500); // the question's timer
    clock.runNext();
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8081 w1");
    assertThat(count("fairway.discovery.errors", "timeout")).isEqualTo(1);
    assertThat(clock.nextInMillis()).isEqualTo(1_000);
  }

  @Test
  void clientFailures_areSortedIntoReasons() {
    dns.on(Q_SRV, failure(new SocketTimeoutException("Query timed out")), rcode(Rcode.REFUSED),
        failure(new java.io.IOException("Network is unreachable")),
        failure(new org.xbill.DNS.WireParseException("end of input")));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));
    for (int i = 0; i < 3; i++) {
      clock.runNext();
    }
    assertThat(count("fairway.discovery.errors", "timeout")).isEqualTo(1);
    assertThat(count("fairway.discovery.errors", "refused")).isEqualTo(1);
    assertThat(count("fairway.discovery.errors", "io")).isEqualTo(1);
    assertThat(count("fairway.discovery.errors", "malformed")).isEqualTo(1);
    assertThat(source.whenReady()).isNotDone(); // a failure is no answer
  }

  @Test
  void nxdomain_emptiesTheList_andWaitsTheNegativeTtl() {
    dns.on(Q_SRV, answerWithAdditional(new Record[] {srv(SRV, 30, 10, 1, 8081, "a.svc.test.")},
        a("a.svc.test.", 30, "10.0.0.1")), rcode(Rcode.NXDOMAIN, soa("svc.test.", 3_600, 60)));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));
    clock.runNext();
    assertThat(source.targets()).isEmpty();
    assertThat(counter("fairway.discovery.emptied")).isEqualTo(1);
    assertThat(clock.nextInMillis()).isEqualTo(60_000);
    assertThat(stalenessSeconds()).isEqualTo(0);
  }

  @Test
  void noSrvRecords_isARealEmptyAnswer_evenAtTheStart() {
    dns.on(Q_SRV, rcode(Rcode.NOERROR, soa("svc.test.", 3_600, 15)));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));
    assertThat(source.whenReady().getNow(null)).isEmpty();
    assertThat(counter("fairway.discovery.emptied")).isZero(); // nothing was there to lose
    assertThat(clock.nextInMillis()).isEqualTo(15_000);
  }

  @Test
  void aHostWhoseLookupFails_keepsItsLastKnownAddresses_andIsRetriedSoon() {
    dns.on(Q_SRV, answer(srv(SRV, 60, 10, 1, 8081, "a.svc.test."), srv(SRV, 60, 10, 1, 8082, "b.svc.test.")))
        .on("a.svc.test. A", answer(a("a.svc.test.", 60, "10.0.0.1")))
        .on("a.svc.test. AAAA", rcode(Rcode.NOERROR, soa("svc.test.", 60, 60)))
        .on("b.svc.test. A", answer(a("b.svc.test.", 60, "10.0.0.2")), rcode(Rcode.SERVFAIL))
        .on("b.svc.test. AAAA", rcode(Rcode.NOERROR, soa("svc.test.", 60, 60)));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8081 w1", "10.0.0.2:8082 w1");
    clock.runNext();
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8081 w1", "10.0.0.2:8082 w1");
    assertThat(count("fairway.discovery.errors", "servfail")).isEqualTo(1);
    assertThat(clock.nextInMillis()).isEqualTo(1_000);
  }

  @Test
  void addresses_giveOneTargetPerAddressOnTheFixedPort() {
    dns.on("web.svc.test. A", answer(a("web.svc.test.", 40, "10.0.0.1"), a("web.svc.test.", 40, "10.0.0.2")))
        .on("web.svc.test. AAAA", answer(aaaa("web.svc.test.", 50, "fd00::1")));
    DnsTargetSource source = start(DnsTargetSource.addresses("web.svc.test", 8080));
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8080 w1", "10.0.0.2:8080 w1", "[fd00::1]:8080 w1");
    assertThat(source.targets().get(0).metadata()).containsExactly(java.util.Map.entry("dns.name", "web.svc.test"));
    assertThat(clock.nextInMillis()).isEqualTo(40_000);
  }

  @Test
  void addresses_aFailedFamily_keepsTheLastGoodList() {
    dns.on("web.svc.test. A", answer(a("web.svc.test.", 40, "10.0.0.1")))
        .on("web.svc.test. AAAA", answer(aaaa("web.svc.test.", 40, "fd00::1")), rcode(Rcode.SERVFAIL));
    DnsTargetSource source = start(DnsTargetSource.addresses("web.svc.test", 8080));
    clock.runNext();
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8080 w1", "[fd00::1]:8080 w1");
    assertThat(count("fairway.discovery.errors", "servfail")).isEqualTo(1);
  }

  @Test
  void ipv4Only_asksNoAaaa() {
    dns.on("web.svc.test. A", answer(a("web.svc.test.", 40, "10.0.0.1")));
    DnsTargetSource source = start(DnsTargetSource.addresses("web.svc.test", 8080).ipv4Only());
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8080 w1");
    assertThat(dns.takeAsked()).containsExactly("web.svc.test. A");
  }

  @Test
  void aliases_areFollowed_withinAReplyAndBeyondIt_andTheirTtlsCount() {
    dns.on("www.svc.test. A", answer(cname("www.svc.test.", 5, "web.svc.test."), a("web.svc.test.", 40, "10.0.0.1")))
        .on("www.svc.test. AAAA", answer(cname("www.svc.test.", 5, "web.other.test.")))
        .on("web.other.test. AAAA", answer(aaaa("web.other.test.", 40, "fd00::1")));
    DnsTargetSource source = start(DnsTargetSource.addresses("www.svc.test", 8080));
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8080 w1", "[fd00::1]:8080 w1");
    assertThat(dns.takeAsked()).containsExactly("www.svc.test. A", "www.svc.test. AAAA", "web.other.test. AAAA");
    assertThat(clock.nextInMillis()).isEqualTo(5_000);
  }

  @Test
  void aliasLoop_isAFailure() {
    dns.on("www.svc.test. A", answer(cname("www.svc.test.", 5, "x.svc.test.")))
        .on("x.svc.test. A", answer(cname("x.svc.test.", 5, "www.svc.test.")));
    start(DnsTargetSource.addresses("www.svc.test", 8080).ipv4Only());
    assertThat(count("fairway.discovery.errors", "alias_loop")).isEqualTo(1);
    assertThat(dns.takeAsked()).hasSize(Lookup.MAX_ALIASES + 1);
  }

  @Test
  void sameAnswerAgain_notifiesNobody() {
    dns.on(Q_SRV, answerWithAdditional(new Record[] {srv(SRV, 30, 10, 1, 8081, "a.svc.test.")},
        a("a.svc.test.", 30, "10.0.0.1")));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));
    List<List<Target>> heard = new ArrayList<>();
    source.subscribe(heard::add);
    clock.runNext();
    clock.runNext();
    assertThat(heard).hasSize(1);
    assertThat(counter("fairway.discovery.updates")).isEqualTo(1);
  }

  @Test
  void close_stopsTheCycle_failsWhenReady_andUnregistersTheMeters() {
    dns.on(Q_SRV, NEVER);
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));
    CompletableFuture<List<Target>> ready = source.whenReady();
    source.close();
    assertThat(ready).isCompletedExceptionally();
    assertThatThrownBy(ready::join).hasCauseInstanceOf(CancellationException.class);
    clock.runNext(); // the question's timer: nothing follows it
    assertThat(clock.pending()).isZero();
    assertThat(registry.getMeters()).isEmpty();
    source.close(); // idempotent
  }

  @Test
  void aListenerThatThrows_doesNotStopTheOthers() {
    dns.on(Q_SRV, answerWithAdditional(new Record[] {srv(SRV, 30, 10, 1, 8081, "a.svc.test.")},
        a("a.svc.test.", 30, "10.0.0.1")), answerWithAdditional(new Record[] {srv(SRV, 30, 10, 1, 8082, "a.svc.test.")},
        a("a.svc.test.", 30, "10.0.0.1")));
    DnsTargetSource source = start(DnsTargetSource.srv(SRV));
    List<List<Target>> heard = new ArrayList<>();
    boolean[] first = {true};
    source.subscribe(l -> {
      if (!first[0]) {
        throw new IllegalStateException("listener bug");
      }
      first[0] = false;
    });
    source.subscribe(heard::add);
    clock.runNext();
    assertThat(heard).hasSize(2);
    assertThat(ids(source.targets())).containsExactly("10.0.0.1:8082 w1");
  }
}
