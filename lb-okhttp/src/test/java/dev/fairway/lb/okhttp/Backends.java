package dev.fairway.lb.okhttp;

import dev.fairway.lb.Target;
import dev.fairway.lb.testing.NoDelayServerSocketFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.ConnectionPool;
import okhttp3.EventListener;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;

/**
 * Loopback MockWebServers (TCP_NODELAY on every accepted socket) and clients with small timeouts,
 * closed together at the end of a test.
 */
final class Backends implements AutoCloseable {
  final List<MockWebServer> servers = new ArrayList<>();
  private final List<OkHttpClient> clients = new ArrayList<>();
  /** Connection attempts per server port, counted by clients made with {@link #client}. */
  final Map<Integer, AtomicInteger> connectStarts = new ConcurrentHashMap<>();
  /** The calls that opened (or tried to open) a connection to each server port. */
  final Map<Integer, Set<Call>> callsConnecting = new ConcurrentHashMap<>();

  /** Starts {@code n} servers; server {@code i} answers with {@code behaviour.apply(i)}. */
  static Backends start(int n, Function<Integer, Function<RecordedRequest, MockResponse>> behaviour) throws IOException {
    Backends backends = new Backends();
    for (int i = 0; i < n; i++) {
      backends.startServer(behaviour.apply(i));
    }
    return backends;
  }

  /** Server {@code i} answers 200 with body {@code "s<i>"}. */
  static Backends named(int n) throws IOException {
    return start(n, i -> request -> ok("s" + i));
  }

  static MockResponse ok(String body) {
    return new MockResponse.Builder().code(200).body(body).build();
  }

  MockWebServer startServer(Function<RecordedRequest, MockResponse> behaviour) throws IOException {
    MockWebServer server = new MockWebServer();
    server.setServerSocketFactory(NoDelayServerSocketFactory.INSTANCE);
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        return behaviour.apply(request);
      }
    });
    server.start(InetAddress.getByName("127.0.0.1"), 0);
    servers.add(server);
    return server;
  }

  Target target(int i) {
    return Target.of("127.0.0.1", servers.get(i).getPort());
  }

  Target[] targets() {
    Target[] out = new Target[servers.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = target(i);
    }
    return out;
  }

  int port(int i) {
    return servers.get(i).getPort();
  }

  int requests(int i) {
    return servers.get(i).getRequestCount();
  }

  int totalRequests() {
    int total = 0;
    for (MockWebServer s : servers) {
      total += s.getRequestCount();
    }
    return total;
  }

  int connectStarts(int i) {
    AtomicInteger n = connectStarts.get(port(i));
    return n == null ? 0 : n.get();
  }

  /** The calls that tried to connect to server {@code i}. */
  Set<Call> callsConnecting(int i) {
    return callsConnecting.getOrDefault(port(i), Set.of());
  }

  /** Connect 1 s, read 3 s, whole call 10 s; counts connection attempts per port. */
  OkHttpClient client(Interceptor interceptor) {
    OkHttpClient.Builder builder = new OkHttpClient.Builder()
        .connectTimeout(1, TimeUnit.SECONDS)
        .readTimeout(3, TimeUnit.SECONDS)
        .writeTimeout(3, TimeUnit.SECONDS)
        .callTimeout(10, TimeUnit.SECONDS)
        .connectionPool(new ConnectionPool(16, 1, TimeUnit.MINUTES))
        .eventListener(new EventListener() {
          @Override
          public void connectStart(Call call, InetSocketAddress address, java.net.Proxy proxy) {
            connectStarts.computeIfAbsent(address.getPort(), p -> new AtomicInteger()).incrementAndGet();
            callsConnecting.computeIfAbsent(address.getPort(), p -> ConcurrentHashMap.newKeySet()).add(call);
          }
        });
    if (interceptor != null) {
      builder.addInterceptor(interceptor);
    }
    OkHttpClient client = builder.build();
    client.dispatcher().setMaxRequests(128);
    client.dispatcher().setMaxRequestsPerHost(128);
    clients.add(client);
    return client;
  }

  /** Shuts server {@code i} down: its port refuses connections from now on. */
  void kill(int i) {
    servers.get(i).close();
  }

  @Override
  public void close() {
    for (OkHttpClient client : clients) {
      client.dispatcher().cancelAll();
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
    for (MockWebServer server : servers) {
      server.close();
    }
  }
}
