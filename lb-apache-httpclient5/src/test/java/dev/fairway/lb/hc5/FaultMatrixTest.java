package dev.fairway.lb.hc5;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.testing.FaultServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.classic.methods.HttpUriRequestBase;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Plain HttpClient 5 against HttpClient 5 with Fairway, one fault at a time, in one run, as
 * lb-okhttp's matrix of the same name. Two loopback targets: one healthy, one that injects the fault
 * ({@link FaultServer}, or nothing listening at all). For GET and for POST, {@value #CALLS} calls one
 * after another with the plain client on the healthy target alone, then {@value #CALLS} through
 * {@link FairwayHttpClient5} over both targets (round robin, so the faulty target is picked by the
 * second call at the latest; default passive health, retries and budget), each client with HttpClient's
 * default retry strategy and the same timeouts: connect 1 s, response 500 ms where the fault is
 * headers that never come and 2 s elsewhere. A call fails when it throws, its status is not 200, or
 * its entity cannot be read to the end.
 *
 * <p>What must hold whatever the machine's load:
 *
 * <ul>
 *   <li>GET: Fairway fails no more calls than the plain client on the healthy target alone.
 *   <li>POST: no call reached both servers (never a resend after a possible send).
 *   <li>POST: every call that failed through Fairway reached the faulty server, or found a pooled
 *       connection the faulty server had closed (HttpClient does not resend a POST, with or without
 *       Fairway); nothing was lost before the send otherwise (a refused connection is retried).
 *   <li>The faulty target was tried by Fairway; every in-flight slot is freed.
 * </ul>
 *
 * <p>The table (fault x method: failures of each, calls, requests the faulty server received from
 * Fairway's calls) is printed and written to {@code target/fault-matrix.md}.
 */
class FaultMatrixTest {
  static final int CALLS = 10;
  private static final String SERVICE = "orders";
  private static final Map<String, String> TABLE = new ConcurrentSkipListMap<>();

  enum Fault {
    REFUSED("refused connection", null),
    RESET_BEFORE_RESPONSE("reset before any response byte", FaultServer.Behaviour.RESET_BEFORE_RESPONSE),
    RESET_AFTER_HEADERS("reset after the headers", FaultServer.Behaviour.RESET_AFTER_HEADERS),
    TRUNCATED_BODY("truncated body (10 of 100 bytes)", FaultServer.Behaviour.TRUNCATED_BODY),
    HEADERS_NEVER_COME("headers never come (response timeout 500 ms)", FaultServer.Behaviour.HEADERS_NEVER_COME),
    GARBAGE_STATUS_LINE("garbage status line", FaultServer.Behaviour.GARBAGE_STATUS_LINE),
    UNAVAILABLE_AND_CLOSE("503 with Connection: close", FaultServer.Behaviour.UNAVAILABLE_AND_CLOSE),
    SLOW_BODY("very slow body (a byte every 30 ms)", FaultServer.Behaviour.SLOW_BODY),
    STALE_KEEP_ALIVE("stale keep-alive connections", FaultServer.Behaviour.CLOSE_AFTER_RESPONSE);

    final String label;
    final FaultServer.@Nullable Behaviour behaviour;

    Fault(String label, FaultServer.@Nullable Behaviour behaviour) {
      this.label = label;
      this.behaviour = behaviour;
    }
  }

  @ParameterizedTest
  @EnumSource(Fault.class)
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void fairway_neverFailsMoreGetsThanPlainHttpClient_andNeverResendsAPost(Fault fault) throws Exception {
    try (FaultServer healthy = FaultServer.start(FaultServer.Behaviour.HEALTHY);
        FaultServer faulty = fault.behaviour == null ? null : FaultServer.start(fault.behaviour)) {
      int faultyPort = faulty == null ? FaultServer.refusedPort() : faulty.port();
      for (String method : List.of("GET", "POST")) {
        String prefix = fault.name() + "-" + method + "-";
        long responseTimeoutMillis = fault == Fault.HEADERS_NEVER_COME ? 500 : 2_000;
        List<String> plainFailures;
        try (Clients clients = new Clients()) {
          CloseableHttpClient plain = clients.client(null, responseTimeoutMillis);
          plainFailures = sendAll(plain, "http://127.0.0.1:" + healthy.port(), method, prefix + "plain-");
        }

        List<String> fairwayFailures;
        TargetState faultyState;
        try (Clients clients = new Clients();
            LoadBalancer lb = LoadBalancer.builder(SERVICE)
                .targets(Target.of("127.0.0.1", faultyPort), Target.of("127.0.0.1", healthy.port()))
                .strategy(Strategy.roundRobin())
                .build()) {
          CloseableHttpClient balanced = clients.client(
              FairwayHttpClient5.builder().service(SERVICE, lb).build(), responseTimeoutMillis);
          fairwayFailures = sendAll(balanced, "http://" + SERVICE, method, prefix + "fairway-");
          assertThat(Clients.inFlight(lb)).as("in flight after %s %s", fault, method).isZero();
          faultyState = lb.status().stream().filter(s -> s.target().port() == faultyPort).findFirst()
              .orElseThrow().state();
        }

        int atFaulty = faulty == null ? 0 : faulty.receivedWithPrefix(prefix + "fairway-");
        TABLE.put(String.format(Locale.ROOT, "%02d-%s", fault.ordinal() * 2 + (method.equals("GET") ? 0 : 1), method),
            String.format(Locale.ROOT, "| %s | %s | %d | %d | %d | %d | %s |", fault.label, method, CALLS,
                plainFailures.size(), fairwayFailures.size(), atFaulty, firstFailure(fairwayFailures)));
        String context = String.format("%s %s: plain failed %s; Fairway failed %s", fault, method, plainFailures,
            fairwayFailures);

        if (faulty == null) {
          assertThat(faultyState).as("the refused target was tried and ejected (%s)", context)
              .isEqualTo(TargetState.EJECTED);
        } else {
          assertThat(atFaulty).as("Fairway tried the faulty target (%s)", context).isPositive();
        }
        if (method.equals("GET")) {
          assertThat(fairwayFailures.size()).as(context).isLessThanOrEqualTo(plainFailures.size());
          continue;
        }
        for (int i = 0; i < CALLS; i++) {
          String id = prefix + "fairway-" + i;
          int servers = (healthy.received(id) > 0 ? 1 : 0) + (faulty != null && faulty.received(id) > 0 ? 1 : 0);
          assertThat(servers).as("servers %s reached (%s)", id, context).isLessThanOrEqualTo(1);
          assertThat(healthy.received(id) + (faulty == null ? 0 : faulty.received(id)))
              .as("times %s was received (%s)", id, context).isLessThanOrEqualTo(1);
        }
        for (String failure : fairwayFailures) {
          String id = failure.substring(0, failure.indexOf(' '));
          boolean reachedFaulty = faulty != null && faulty.received(id) > 0;
          boolean staleConnection = fault == Fault.STALE_KEEP_ALIVE;
          assertThat(reachedFaulty || staleConnection)
              .as("failed POST %s reached the faulty server, not lost before the send (%s)", id, context).isTrue();
        }
      }
    }
  }

  @AfterAll
  static void printTable() throws IOException {
    StringBuilder table = new StringBuilder()
        .append("| fault | method | calls | plain HttpClient 5 failures (healthy target alone)"
            + " | Fairway failures (both targets) | requests at the faulty target | what a failed Fairway call saw |\n")
        .append("|---|---|---|---|---|---|---|\n");
    TABLE.values().forEach(row -> table.append(row).append('\n'));
    System.out.println(table);
    Path target = Path.of("target");
    if (Files.isDirectory(target)) {
      Files.writeString(target.resolve("fault-matrix.md"), table);
    }
  }

  /** The first failure without its call id, e.g. "java.net.SocketException: Connection reset"; "" if none. */
  private static String firstFailure(List<String> failures) {
    if (failures.isEmpty()) {
      return "";
    }
    String first = failures.get(0);
    return first.substring(first.indexOf(' ') + 1).replace("|", "/");
  }

  /** Sends {@value #CALLS} calls one after another; the failed ones as "id what". */
  private static List<String> sendAll(CloseableHttpClient client, String base, String method, String idPrefix) {
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      String id = idPrefix + i;
      HttpUriRequestBase request = method.equals("POST") ? new HttpPost(base + "/work") : new HttpGet(base + "/work");
      request.addHeader(FaultServer.CALL_HEADER, id);
      if (method.equals("POST")) {
        request.setEntity(new StringEntity("amount=5"));
      }
      String failure = null;
      try (ClassicHttpResponse response = client.executeOpen(null, request, null)) {
        try {
          String body = EntityUtils.toString(response.getEntity());
          if (response.getCode() != 200) {
            failure = "HTTP " + response.getCode();
          } else if (body.isEmpty()) {
            failure = "empty body";
          }
        } catch (IOException | org.apache.hc.core5.http.ParseException e) {
          failure = e + ", reading the entity of a " + response.getCode();
        }
      } catch (IOException e) {
        if (failure == null) { // closing a response whose entity failed may throw again: one failure per call
          failure = e.toString();
        }
      }
      if (failure != null) {
        failures.add(id + " " + failure);
      }
    }
    return failures;
  }
}
