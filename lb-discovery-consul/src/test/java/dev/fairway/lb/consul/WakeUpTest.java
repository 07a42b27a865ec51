package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the watch asks and delivers when, on fake time, against a model of Consul's index: a blocking
 * query on index {@code i} is answered as soon as the model's index passes {@code i}, a fresh read at
 * once. Every query and every delivery is recorded with its (fake) time, in milliseconds from the start.
 */
class WakeUpTest {
  private static final String BASE = "/v1/health/service/orders";
  private static final Pattern INDEX = Pattern.compile("[?&]index=(\\d+)");
  private static final long MS = 1_000_000L;

  private final ScriptedHttp http = new ScriptedHttp();
  private final ManualScheduler scheduler = new ManualScheduler();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final long start = scheduler.nanoTime();
  private final List<String> queries = new ArrayList<>(); // "ms path"
  private final List<Long> queryTimes = new ArrayList<>();
  private final List<String> deliveries = new ArrayList<>(); // "ms ids"
  private final List<Delivery> delivered = new ArrayList<>(); // time and every field a change can touch
  private final List<String> logs = new CopyOnWriteArrayList<>();
  private final Logger jul = Logger.getLogger(ConsulTargetSource.class.getName());
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord r) {
      logs.add(r.getLevel() + " " + new java.util.logging.SimpleFormatter().formatMessage(r));
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  WakeUpTest() {
    jul.addHandler(capture);
  }

  @AfterEach
  void detach() {
    jul.removeHandler(capture);
  }

  /** Consul as the watch sees it: the index and the body at a time, and when the index next moves. */
  interface Model {
    long index(long atMs);

    String body(long atMs);

    /** The first time after {@code atMs} at which the index moves; Long.MAX_VALUE if never. */
    long nextChange(long atMs);
  }

  private long nowMs() {
    return (scheduler.nanoTime() - start) / MS;
  }

  private ConsulTargetSource source() {
    ConsulTargetSource s = TestSupport.fakeTime(http, scheduler).source("orders").closeness(false)
        .meterRegistry(registry).build();
    s.subscribe(list -> {
      deliveries.add(nowMs() + " " + list.stream().map(Target::id).toList());
      delivered.add(new Delivery(nowMs(), describe(list)));
    });
    deliveries.clear(); // the empty list handed over at subscription
    delivered.clear();
    return s;
  }

  /** Runs the watch against {@code model} up to {@code untilMs}: answers queries, runs due steps, moves time. */
  private void run(Model model, long untilMs) {
    while (true) {
      recordQueries();
      ScriptedHttp.Call open = http.count() == 0 ? null : http.last();
      if (open != null && !open.reply().isDone()) {
        Matcher m = INDEX.matcher(open.pathAndQuery());
        long blockOn = m.find() ? Long.parseLong(m.group(1)) : 0;
        long now = nowMs();
        if (blockOn < model.index(now)) {
          http.ok(model.index(now), model.body(now));
          continue;
        }
      }
      long nextStep = scheduler.nextDueNanos();
      long nextChange = model.nextChange(nowMs()) == Long.MAX_VALUE ? Long.MAX_VALUE
          : start + model.nextChange(nowMs()) * MS;
      long until = start + untilMs * MS;
      if (Math.min(nextStep, nextChange) > until) {
        scheduler.advanceTo(until);
        return;
      }
      if (nextStep <= nextChange) {
        scheduler.runNext();
      } else {
        scheduler.advanceTo(nextChange);
      }
    }
  }

  private void recordQueries() {
    while (queries.size() < http.count()) {
      queries.add(nowMs() + " " + http.paths().get(queries.size()).substring(BASE.length()));
      queryTimes.add(nowMs());
    }
  }

  private static String entry(int n) {
    return WatchLoopTest.entry("o" + n, "n" + n, "10.0.0." + n, 80, "passing");
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  void rollingDeploy_20ChangesTwoSecondsApart_eachQueriedAndDeliveredAtOnce() {
    // Five instances; at 2 s, 4 s, ... 40 s one step of a rolling deploy: o<k> leaves, o<k+5> joins.
    Model deploy = new Model() {
      @Override
      public long index(long atMs) {
        return 100 + Math.min(20, atMs / 2_000);
      }

      @Override
      public String body(long atMs) {
        int step = (int) Math.min(20, atMs / 2_000);
        List<String> entries = new ArrayList<>();
        for (int n = step + 1; n <= step + 5; n++) {
          entries.add(entry(n));
        }
        return "[" + String.join(",", entries) + "]";
      }

      @Override
      public long nextChange(long atMs) {
        return atMs >= 40_000 ? Long.MAX_VALUE : (atMs / 2_000 + 1) * 2_000;
      }
    };
    source();
    run(deploy, 60_000);

    List<String> expectedQueries = new ArrayList<>(List.of("0 ", "0 ?index=100&wait=5m"));
    List<String> expectedDeliveries = new ArrayList<>(List.of("0 [o1@n1, o2@n2, o3@n3, o4@n4, o5@n5]"));
    for (int k = 1; k <= 20; k++) {
      long at = k * 2_000L;
      expectedQueries.add(at + " ?index=" + (100 + k) + "&wait=5m");
      List<String> ids = new ArrayList<>();
      for (int n = k + 1; n <= k + 5; n++) {
        ids.add("o" + n + "@n" + n);
      }
      ids.sort(null);
      expectedDeliveries.add(at + " " + ids);
    }
    assertThat(deliveries).as("each step delivered when Consul has it (within 1 s: here 0 ms)")
        .containsExactlyElementsOf(expectedDeliveries);
    assertThat(queries).containsExactlyElementsOf(expectedQueries);
    assertThat(scheduler.waitsMillis()).as("no query held back").isEmpty();
    assertThat(registry.find("fairway.discovery.throttled").counters()).isEmpty();
  }

  @Test
  void hotLoop_indexEvery2msWithoutAChange_twoQueriesASecond_andARegistrationAfter3sArrivesWithin500ms() {
    // The measurement: 3 s of an index moving every 2 ms with the same list, then o3 registers
    // at 3,003 ms, just after a same-list reply (the worst moment); the index keeps moving after it.
    Model hot = new Model() {
      @Override
      public long index(long atMs) {
        return 1 + atMs / 2;
      }

      @Override
      public String body(long atMs) {
        return atMs < 3_003 ? "[" + entry(1) + "," + entry(2) + "]"
            : "[" + entry(1) + "," + entry(2) + "," + entry(3) + "]";
      }

      @Override
      public long nextChange(long atMs) {
        return (atMs / 2 + 1) * 2;
      }
    };
    source();
    run(hot, 6_000);

    // The fresh read and the first blocking query; the burst of 2 same-list wake-ups; then 500 ms apart
    // (the first wait is 496 ms: the bucket refilled by 4 ms while the burst went out).
    assertThat(queryTimes.subList(0, 11))
        .containsExactly(0L, 0L, 2L, 4L, 502L, 1_002L, 1_502L, 2_002L, 2_502L, 3_002L, 3_502L);
    assertThat(queryTimes.stream().filter(t -> t < 3_000).count()).as("the first 3 s: 2 + burst 2 + 2 a second")
        .isEqualTo(2 + ConsulTargetSource.DEFAULT_BURST + 5);
    assertThat(deliveries).containsExactly("0 [o1@n1, o2@n2]", "3502 [o1@n1, o2@n2, o3@n3]");
    assertThat(3_502L - 3_003L).as("the registration waited one spacing at most")
        .isLessThanOrEqualTo(ConsulTargetSource.DEFAULT_REFILL.toMillis());
    // After the change the next query goes out at once; the same-list spacing goes on after it.
    assertThat(queryTimes.subList(11, queryTimes.size())).containsExactly(3_502L, 4_002L, 4_502L, 5_002L, 5_502L);
    assertThat(registry.get("fairway.discovery.throttled").tag("reason", "unchanged").counter().count())
        .as("each same-list reply after the burst: at 6 ms, 502 ms, ... 3,002 ms, 3,504 ms, ... 5,502 ms")
        .isEqualTo(12.0);
  }

  @Test
  void registerDeregisterFailACheck_eachAfterSameListWakeUps_eachArrivesWithin500ms() {
    // Each change is followed by two check-output syncs 10 ms apart (the same list under a new
    // index), which spend the same-list burst, and the next change comes 2 ms after the last sync.
    Timeline t = new Timeline(100, "[" + entry(1) + "]");
    t.at(1_000, "[" + entry(1) + "," + entry(2) + "]"); // o2 registers
    t.touch(1_010).touch(1_020);
    t.at(1_022, "[" + entry(2) + "]"); // o1 deregisters: the query is out, seen at once
    t.touch(1_032).touch(1_042); // the burst is spent: the next query waits 478 ms
    t.at(1_044, "[" + WatchLoopTest.entry("o2", "n2", "10.0.0.2", 80, "critical") + "]"); // o2's check fails
    t.touch(1_054).touch(1_064);
    t.at(3_000, "[" + entry(2) + "]"); // and passes again
    source();
    run(t, 10_000);

    assertEveryChangeThatHoldsArrivesWithin(t, 500);
    assertThat(deliveries.stream().map(d -> d.substring(0, d.indexOf(' '))).toList())
        .containsExactly("0", "1000", "1022", "1510", "3000");
  }

  @Test
  void churn_changesEvery50msFor5s_thenQuiet_theLastStateArrivesWithin500ms_neverHeldOver500ms() {
    // A busy service: every 50 ms one of five instances turns warning or critical (a new weight or
    // health: a real change), with check-output syncs in between; at 5,010 ms o6 joins and it settles.
    Timeline t = new Timeline(100, five(0));
    for (int step = 1; step <= 100; step++) {
      t.at(step * 50L, five(step));
      t.touch(step * 50L + 20);
    }
    t.at(5_010, five(0).replace("]", "," + entry(6) + "]")); // settles: o6 joins
    source();
    run(t, 10_000);

    assertEveryChangeThatHoldsArrivesWithin(t, 500);
    // Changes go out at once while the change bucket (10, then 2 a second) has tokens; a same-list
    // wake-up waits out its spacing: at most three queries per 500 ms, and never a hold over 500 ms.
    // o6's registration at 5,010 ms comes during a hold and is delivered by the 5,070 ms query.
    assertThat(queryTimes).containsExactly(0L, 0L, 50L, 70L, 100L, 120L, 150L, 570L, 570L, 600L, 1_070L, 1_570L,
        1_570L, 1_600L, 2_070L, 2_070L, 2_100L, 2_570L, 3_070L, 3_070L, 3_100L, 3_570L, 3_570L, 3_600L, 4_070L,
        4_570L, 4_570L, 4_600L, 5_070L, 5_070L);
    assertThat(delivered.get(delivered.size() - 1).atMs()).isEqualTo(5_070L);
  }

  /** Five instances after {@code step} steps: o(step % 5 + 1) in warning or critical, or none. */
  private static String five(int step) {
    List<String> entries = new ArrayList<>();
    for (int n = 1; n <= 5; n++) {
      String status = step % 5 == n - 1 ? List.of("passing", "warning", "critical").get(step % 3) : "passing";
      entries.add(WatchLoopTest.entry("o" + n, "n" + n, "10.0.0." + n, 80, status)
          .replace("\"Port\":80}", "\"Port\":80,\"Weights\":{\"Passing\":10,\"Warning\":1}}"));
    }
    return "[" + String.join(",", entries) + "]";
  }

  @Test
  void flappingCheck_isDampedToAQueryPer500ms_logsAndCountsIt_theStateItSettlesInArrivesWithin500ms() {
    // o2's check flips every 100 ms until 30 s, through passing, warning and critical (so that every
    // poll, 5 flips later, still finds a change); it settles at 30 s; at 40 s o3 registers.
    Timeline t = new Timeline(1, "[" + entry(1) + "," + flap(0) + "]");
    for (int flip = 1; flip <= 300; flip++) {
      t.at(flip * 100L, "[" + entry(1) + "," + flap(flip) + "]");
    }
    t.at(40_000, "[" + entry(1) + "," + flap(300) + "," + entry(3) + "]");
    source();
    run(t, 60_000);

    // Immediate while the change bucket (10, refilled one per 500 ms) lasts: the first list at 0, then
    // flips at 100 ms, 200 ms, ...: tokens left after the n-th flip = 9 - n + n/5, none for the 12th.
    List<Long> expected = new ArrayList<>(List.of(0L));
    for (long at = 0; at <= 1_100; at += 100) {
      expected.add(at);
    }
    // The 12th flip (1.2 s) finds the bucket empty: one query 500 ms after each reply, each answered at
    // once; the one at 30.7 s blocks (quiet since 30 s) until o3 joins at 40 s: polling ends.
    for (long at = 1_700; at <= 30_700; at += 500) {
      expected.add(at);
    }
    expected.add(40_000L);
    assertThat(queryTimes).containsExactlyElementsOf(expected);
    assertEveryChangeThatHoldsArrivesWithin(t, 500);
    assertThat(deliveries.get(deliveries.size() - 1)).isEqualTo("40000 [o1@n1, o2@n2, o3@n3]");
    assertThat(registry.get("fairway.discovery.throttled").tag("reason", "flapping").counter().count())
        .as("each held poll: the replies at 1.2 s, 1.7 s, ... 30.2 s").isEqualTo(59.0);
    assertThat(logs.stream().filter(l -> l.contains("flapping check")).toList()).hasSize(1)
        .allMatch(l -> l.startsWith("WARNING") && l.contains("one query per 500 ms"));
    assertThat(logs).anyMatch(l -> l.startsWith("INFO") && l.contains("quiet again"));
  }

  /** o2 after {@code flip} flips: passing, warning, critical, ... (weights 10/1: three different targets). */
  private static String flap(int flip) {
    String status = List.of("passing", "warning", "critical").get(flip % 3);
    return WatchLoopTest.entry("o2", "n2", "10.0.0.2", 80, status)
        .replace("\"Port\":80}", "\"Port\":80,\"Weights\":{\"Passing\":10,\"Warning\":1}}");
  }

  // ---------------------------------------------------------------------------------------------

  /** One delivery: its (fake) time and the list as {@link #describe} shows it. */
  record Delivery(long atMs, String list) {}

  /** Every field a change can touch, in id order: "id weight healthy". */
  static String describe(List<Target> targets) {
    return targets.stream().map(x -> x.id() + " " + x.weight() + " " + x.healthy()).sorted().toList().toString();
  }

  /**
   * Consul as a list of events: at each time either a new body or a touch (the same body under a new
   * index). The index moves by one per event.
   */
  static final class Timeline implements Model {
    private final long baseIndex;
    private final java.util.TreeMap<Long, String> bodies = new java.util.TreeMap<>();
    private final java.util.TreeSet<Long> events = new java.util.TreeSet<>();

    Timeline(long baseIndex, String initialBody) {
      this.baseIndex = baseIndex;
      bodies.put(Long.MIN_VALUE, initialBody);
    }

    Timeline at(long ms, String body) {
      bodies.put(ms, body);
      events.add(ms);
      return this;
    }

    Timeline touch(long ms) {
      events.add(ms);
      return this;
    }

    @Override
    public long index(long atMs) {
      return baseIndex + events.headSet(atMs, true).size();
    }

    @Override
    public String body(long atMs) {
      return bodies.floorEntry(atMs).getValue();
    }

    @Override
    public long nextChange(long atMs) {
      Long next = events.higher(atMs);
      return next == null ? Long.MAX_VALUE : next;
    }

    /** The list a body maps to, as {@link #describe} shows it. */
    String expected(long atMs) {
      try {
        return describe(new HealthMapper("zone", false).map(
            new com.fasterxml.jackson.databind.ObjectMapper().readTree(body(atMs))).targets());
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /**
   * The rule under test: every change of the list that then holds for {@code boundMs} has been
   * delivered by {@code boundMs} after it happened (a change that is undone sooner may be skipped).
   */
  private void assertEveryChangeThatHoldsArrivesWithin(Timeline t, long boundMs) {
    List<Long> changes = new ArrayList<>();
    for (long at : t.bodies.keySet()) {
      if (at != Long.MIN_VALUE && !t.expected(at).equals(t.expected(at - 1))) {
        changes.add(at);
      }
    }
    assertThat(changes).as("the timeline changes the list").isNotEmpty();
    int checked = 0;
    for (int i = 0; i < changes.size(); i++) {
      long at = changes.get(i);
      long deadline = at + boundMs;
      boolean holds = i + 1 == changes.size() || changes.get(i + 1) > deadline;
      if (!holds) {
        continue;
      }
      String seen = "(nothing)";
      for (Delivery d : delivered) {
        if (d.atMs() <= deadline) {
          seen = d.list();
        }
      }
      assertThat(seen).as("the list at %d ms, delivered by %d ms", at, deadline).isEqualTo(t.expected(at));
      checked++;
    }
    assertThat(checked).as("changes that held").isPositive();
  }
}
