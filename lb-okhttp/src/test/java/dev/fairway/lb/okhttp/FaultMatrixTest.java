package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.RetryRule;
import dev.fairway.lb.testing.FaultServer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.ConnectionPool;
import okhttp3.EventListener;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 25, item 3: plain OkHttp against OkHttp with Fairway, one fault at a time, in one run. Two
 * loopback targets: one healthy, one that injects the fault ({@link FaultServer}, or nothing
 * listening at all). For GET and for POST, {@value #CALLS} calls one after another with plain OkHttp
 * on the healthy target alone, then {@value #CALLS} through {@link LoadBalancingInterceptor} over
 * both targets (round robin, so the faulty target is picked by the second call at the latest;
 * default passive health, retries and budget), each client with the same timeouts: connect 1 s,
 * call 5 s, read 500 ms where the fault is headers that never come and 2 s elsewhere (no other
 * fault needs the read timeout, and a healthy answer slower than 500 ms on a starved machine must
 * not count against either side).
 * A call fails when it throws, its status is not 200, or its body cannot be read to the end.
 *
 * <p>What must hold whatever the machine's load:
 *
 * <ul>
 *   <li>GET: Fairway fails no more calls than plain OkHttp on the healthy target alone.
 *   <li>POST: no call reached both servers, and the interceptor counted no retry but for connections
 *       that could not be made ({@code fairway.retries} with a reason other than {@code
 *       connect_failure} stays 0): never a retry after a possible send.
 *   <li>POST: every call that failed through Fairway reached the faulty server (nothing was lost
 *       before the send; a refused connection is retried elsewhere, so nothing fails there).
 *   <li>The faulty target was tried by Fairway; every in-flight slot is freed.
 * </ul>
 *
 * <p>The table (fault x method: failures of each, calls, requests the faulty server received from
 * Fairway's calls) is printed and written to {@code target/fault-matrix.md}; lb-okhttp's README
 * quotes a run of it. Bounded: each fault at most 30 s, the whole matrix about ten.
 */
class FaultMatrixTest {
  static final int CALLS = 10;
  private static final MediaType TEXT = MediaType.get("text/plain; charset=utf-8");
  private static final String SERVICE = "orders";
  private static final Map<String, String> TABLE = new ConcurrentSkipListMap<>();

  enum Fault {
    REFUSED("refused connection", null),
    RESET_BEFORE_RESPONSE("reset before any response byte", FaultServer.Behaviour.RESET_BEFORE_RESPONSE),
    RESET_AFTER_HEADERS("reset after the headers", FaultServer.Behaviour.RESET_AFTER_HEADERS),
    TRUNCATED_BODY("truncated body (10 of 100 bytes)", FaultServer.Behaviour.TRUNCATED_BODY),
    HEADERS_NEVER_COME("headers never come (read timeout 500 ms)", FaultServer.Behaviour.HEADERS_NEVER_COME),
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
  @Timeout(value = 30, unit = TimeUnit.SECONDS)
  void fairway_neverFailsMoreGetsThanPlainOkHttp_andNeverResendsAPost(Fault fault) throws Exception {
    try (FaultServer healthy = FaultServer.start(FaultServer.Behaviour.HEALTHY);
        FaultServer faulty = fault.behaviour == null ? null : FaultServer.start(fault.behaviour)) {
      int faultyPort = faulty == null ? FaultServer.refusedPort() : faulty.port();
      for (String method : List.of("GET", "POST")) {
        String prefix = fault.name() + "-" + method + "-";
        long readTimeoutMillis = fault == Fault.HEADERS_NEVER_COME ? 500 : 2_000;
        Clients clients = new Clients(readTimeoutMillis);
        List<String> plainFailures;
        try {
          OkHttpClient plain = clients.client(null);
          plainFailures = sendAll(plain, "http://127.0.0.1:" + healthy.port(), method, prefix + "plain-");
        } finally {
          clients.close();
        }

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<String> fairwayFailures;
        clients = new Clients(readTimeoutMillis);
        try (LoadBalancer lb = LoadBalancer.builder(SERVICE)
            .targets(Target.of("127.0.0.1", faultyPort), Target.of("127.0.0.1", healthy.port()))
            .strategy(Strategy.roundRobin())
            .meterRegistry(registry)
            .build()) {
          OkHttpClient balanced = clients.client(LoadBalancingInterceptor.builder().service(SERVICE, lb).build());
          fairwayFailures = sendAll(balanced, "http://" + SERVICE, method, prefix + "fairway-");
          assertThat(LoadBalancingInterceptorTest.inFlight(lb)).as("in flight after %s %s", fault, method).isZero();
        } finally {
          clients.close();
        }

        int atFaulty = faulty == null ? 0 : faulty.receivedWithPrefix(prefix + "fairway-");
        TABLE.put(String.format(Locale.ROOT, "%02d-%s", fault.ordinal() * 2 + (method.equals("GET") ? 0 : 1), method),
            String.format(Locale.ROOT, "| %s | %s | %d | %d | %d | %d | %s |", fault.label, method, CALLS,
                plainFailures.size(), fairwayFailures.size(), atFaulty, firstFailure(fairwayFailures)));
        String context = String.format("%s %s: plain failed %s; Fairway failed %s", fault, method, plainFailures,
            fairwayFailures);

        assertThat(clients.connectStarts(faultyPort)).as("Fairway tried the faulty target (%s)", context).isPositive();
        if (method.equals("GET")) {
          assertThat(fairwayFailures.size()).as(context).isLessThanOrEqualTo(plainFailures.size());
          continue;
        }
        for (int i = 0; i < CALLS; i++) {
          String id = prefix + "fairway-" + i;
          int servers = (healthy.received(id) > 0 ? 1 : 0) + (faulty != null && faulty.received(id) > 0 ? 1 : 0);
          assertThat(servers).as("servers %s reached (%s)", id, context).isLessThanOrEqualTo(1);
        }
        assertThat(retriesAfterAPossibleSend(registry)).as("POST retries after a possible send (%s)", context).isZero();
        for (String failure : fairwayFailures) {
          String id = failure.substring(0, failure.indexOf(' '));
          assertThat(faulty != null && faulty.received(id) > 0)
              .as("failed POST %s reached the faulty server, not lost before the send (%s)", id, context).isTrue();
        }
      }
    }
  }

  @AfterAll
  static void printTable() throws IOException {
    StringBuilder table = new StringBuilder()
        .append("| fault | method | calls | plain OkHttp failures (healthy target alone) | Fairway failures (both targets)"
            + " | requests at the faulty target | what a failed Fairway call saw |\n")
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

  private static long retriesAfterAPossibleSend(SimpleMeterRegistry registry) {
    long sum = 0;
    for (Counter c : registry.find("fairway.retries").counters()) {
      if (!RetryRule.CONNECT_FAILURE.equals(c.getId().getTag("reason"))) {
        sum += (long) c.count();
      }
    }
    return sum;
  }

  /** Sends {@value #CALLS} calls one after another; the failed ones as "id what". */
  private static List<String> sendAll(OkHttpClient client, String base, String method, String idPrefix) {
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      String id = idPrefix + i;
      Request.Builder request = new Request.Builder().url(base + "/work").header(FaultServer.CALL_HEADER, id);
      if (method.equals("POST")) {
        request.post(RequestBody.create("amount=5", TEXT));
      }
      try (Response response = client.newCall(request.build()).execute()) {
        try {
          String body = response.body().string();
          if (response.code() != 200) {
            failures.add(id + " HTTP " + response.code());
          } else if (body.isEmpty()) {
            failures.add(id + " empty body");
          }
        } catch (IOException e) {
          failures.add(id + " " + e + ", reading the body of a " + response.code());
        }
      } catch (IOException e) {
        failures.add(id + " " + e);
      }
    }
    return failures;
  }

  /** Clients with the matrix's timeouts, counting connection attempts per port. */
  private static final class Clients implements AutoCloseable {
    private final List<OkHttpClient> clients = new ArrayList<>();
    private final Map<Integer, AtomicInteger> connectStarts = new ConcurrentHashMap<>();
    private final long readTimeoutMillis;

    Clients(long readTimeoutMillis) {
      this.readTimeoutMillis = readTimeoutMillis;
    }

    OkHttpClient client(@Nullable LoadBalancingInterceptor interceptor) {
      OkHttpClient.Builder builder = new OkHttpClient.Builder()
          .connectTimeout(1, TimeUnit.SECONDS)
          .readTimeout(readTimeoutMillis, TimeUnit.MILLISECONDS)
          .writeTimeout(1, TimeUnit.SECONDS)
          .callTimeout(5, TimeUnit.SECONDS)
          .connectionPool(new ConnectionPool(4, 1, TimeUnit.MINUTES))
          .eventListener(new EventListener() {
            @Override
            public void connectStart(Call call, InetSocketAddress address, Proxy proxy) {
              connectStarts.computeIfAbsent(address.getPort(), p -> new AtomicInteger()).incrementAndGet();
            }
          });
      if (interceptor != null) {
        builder.addInterceptor(interceptor);
      }
      OkHttpClient client = builder.build();
      clients.add(client);
      return client;
    }

    int connectStarts(int port) {
      AtomicInteger n = connectStarts.get(port);
      return n == null ? 0 : n.get();
    }

    @Override
    public void close() {
      for (OkHttpClient client : clients) {
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
    }
  }
}
