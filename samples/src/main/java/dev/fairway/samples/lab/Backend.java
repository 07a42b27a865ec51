package dev.fairway.samples.lab;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.concurrent.locks.LockSupport;

/**
 * One simulated backend: a JDK {@link HttpServer} on a loopback port with a fixed pool of
 * {@code workers} threads behind a FIFO queue (the executor's), each request holding a worker for the
 * service time. Responses carry {@code X-Backend: <index>}, and with load reports on, the ORCA
 * header {@value #LOAD_REPORT_HEADER} in its TEXT form (see {@link #loadReport}).
 *
 * <p>Health answers on a separate admin port ({@code GET /health}), as a management port does in
 * real services: a health endpoint behind the same FIFO queue would time out whenever a slow
 * backend is overloaded (round robin queues most users at backend-4), and active health would then
 * pull a live backend out of service and skew every strategy's numbers.
 *
 * <p>{@link #kill()} closes both listeners and every open connection and interrupts the requests in
 * service, so callers see refused connections and cut exchanges; {@link #restart()} binds the same
 * ports again. A response goes out whole or not at all, as a small response from a real server does
 * (one TCP segment): the JDK's server writes the headers and the body separately, and a kill between
 * the two writes would hand the caller a 200 with a truncated body, a failure that happens after the
 * interceptor returned the response and that no router could retry.
 *
 * <p>Gray failures: {@link #slowDown} multiplies the service time of every request that starts
 * afterwards; {@link #failFast} makes every request that reaches a worker afterwards get a 503 at
 * once, without its service time.
 */
final class Backend implements AutoCloseable {
  static final String BACKEND_HEADER = "X-Backend";
  /**
   * ORCA's per-request load report header, as Envoy reads it ({@code source/common/orca/orca_parser.cc}):
   * a format prefix ({@code TEXT }, {@code JSON } or {@code BIN }), here TEXT: comma-separated
   * {@code key=value} pairs.
   */
  static final String LOAD_REPORT_HEADER = "endpoint-load-metrics";

  static {
    // Without TCP_NODELAY every exchange on loopback stalls ~40 ms (Nagle meets delayed ACK). The
    // property is read once, when the first server is created, so it must be set before that.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
    // A fleet run keeps up to clients x users-per-client connections open to every backend; the
    // JDK's server closes idle ones beyond 200 by default, which would make a client's pooled
    // connection die under it. Read once, like nodelay.
    if (System.getProperty("sun.net.httpserver.maxIdleConnections") == null) {
      System.setProperty("sun.net.httpserver.maxIdleConnections", "2000");
    }
  }

  private static final byte[] UNAVAILABLE = "unavailable\n".getBytes(StandardCharsets.US_ASCII);

  private final int index;
  private final int workers;
  private volatile LoadReportStyle reportStyle; // null: no load reports
  private final byte[] body;
  private final LongAdder served = new LongAdder();
  /** Requests that reached a worker since start, answered or not. */
  private final LongAdder received = new LongAdder();
  private final AtomicInteger inService = new AtomicInteger();
  /** Held (shared) while a response is written, (exclusive) while killing. */
  private final ReentrantReadWriteLock responding = new ReentrantReadWriteLock();
  private volatile boolean dead;
  private volatile long serviceNanos;
  private volatile boolean failing;
  private volatile java.util.Random jitter; // null: no jitter
  private volatile double jitterShare;
  private volatile int jitterFactor = 1;
  /** Requests the jitter slowed since start. */
  private final LongAdder jittered = new LongAdder();
  private int port;
  private int adminPort;
  private HttpServer server;
  private HttpServer admin;
  private ThreadPoolExecutor pool;

  Backend(int index, long serviceNanos, int workers) {
    this(index, serviceNanos, workers, false);
  }

  Backend(int index, long serviceNanos, int workers, boolean loadReports) {
    this.index = index;
    this.serviceNanos = serviceNanos;
    this.workers = workers;
    this.reportStyle = loadReports ? LoadReportStyle.HONEST : null;
    this.body = (name() + "\n").getBytes(StandardCharsets.US_ASCII);
  }

  /** Starts on a port the OS picks. */
  synchronized Backend start() throws IOException {
    bind(0, 0);
    return this;
  }

  /** Starts again on the port it had (retrying briefly if the OS has not released it yet). */
  synchronized void restart() throws IOException {
    if (server != null) {
      return;
    }
    BindException last = null;
    for (int attempt = 0; attempt < 50; attempt++) {
      try {
        bind(port, adminPort);
        return;
      } catch (BindException e) {
        last = e;
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
      }
    }
    throw last;
  }

  private void bind(int wantedPort, int wantedAdminPort) throws IOException {
    HttpServer a = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), wantedAdminPort), 1024);
    HttpServer s;
    try {
      s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), wantedPort), 1024);
    } catch (IOException e) {
      a.stop(0);
      throw e;
    }
    a.createContext("/health", exchange -> {
      try (exchange) {
        byte[] ok = "ok\n".getBytes(StandardCharsets.US_ASCII);
        exchange.sendResponseHeaders(200, ok.length);
        exchange.getResponseBody().write(ok);
      }
    });
    a.start();
    ExecutorService executor =
        Executors.newFixedThreadPool(
            workers,
            r -> {
              Thread t = new Thread(r, "backend-" + index + "-worker");
              t.setDaemon(true);
              return t;
            });
    s.setExecutor(executor);
    s.createContext("/", this::handle);
    s.start();
    this.pool = (ThreadPoolExecutor) executor;
    this.server = s;
    this.port = s.getAddress().getPort();
    this.admin = a;
    this.adminPort = a.getAddress().getPort();
    this.dead = false;
  }

  private void handle(HttpExchange exchange) throws IOException {
    received.increment();
    inService.incrementAndGet();
    try (exchange) {
      try (InputStream in = exchange.getRequestBody()) {
        in.transferTo(OutputStream.nullOutputStream());
      }
      if (failing) {
        respond(exchange, 503, UNAVAILABLE);
        return;
      }
      long service = serviceNanos;
      java.util.Random slowOnes = jitter;
      if (slowOnes != null && slowOnes.nextDouble() < jitterShare) {
        service *= jitterFactor;
        jittered.increment();
      }
      long deadline = System.nanoTime() + service;
      for (long left = service; left > 0; left = deadline - System.nanoTime()) {
        LockSupport.parkNanos(left);
        if (Thread.currentThread().isInterrupted()) {
          return; // killed: the connection is already closed
        }
      }
      if (respond(exchange, 200, body)) {
        served.increment();
      }
    } finally {
      inService.decrementAndGet();
    }
  }

  /** Writes a whole response unless the backend was killed meanwhile; false if it was. */
  private boolean respond(HttpExchange exchange, int status, byte[] content) throws IOException {
    responding.readLock().lock();
    try {
      if (dead) {
        return false;
      }
      exchange.getResponseHeaders().set(BACKEND_HEADER, Integer.toString(index));
      exchange.getResponseHeaders().set("Content-Type", "text/plain");
      LoadReportStyle style = reportStyle;
      if (style != null) {
        exchange.getResponseHeaders().set(LOAD_REPORT_HEADER, style.report(load(), workers));
      }
      exchange.sendResponseHeaders(status, content.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(content);
      }
      return true;
    } finally {
      responding.readLock().unlock();
    }
  }

  /**
   * The TEXT-form ORCA report of {@code inFlight} requests (queued or in service, the one being
   * answered excluded) at a backend with {@code workers} workers, e.g. {@code TEXT
   * application_utilization=0.625, named_metrics.rif=5, named_metrics.workers=8}.
   *
   * <p>Which fields: ORCA's {@code application_utilization} is the server's own notion of how busy
   * it is, and may exceed 1 past its soft limit (xds {@code orca_load_report.proto}); gRPC's weighted
   * round robin (gRFC A58) prefers it to {@code cpu_utilization} when it is set. The lab's workers
   * sleep, so CPU would be a lie; occupancy of the worker pool is the honest utilization.
   * {@code named_metrics.rif} (requests in flight, the name Prequal uses and grpc-go's ORCA example
   * in Envoy's tests sends) carries the count itself, and {@code named_metrics.workers} the
   * capacity it is measured against, so a balancer can compare free workers across backends.
   */
  static String loadReport(int inFlight, int workers) {
    return LoadReportStyle.HONEST.report(Math.max(0, inFlight) + 1, workers);
  }

  /** From now on responses carry load reports in {@code style} (the liar's lie, or another honest wording). */
  void reportStyle(LoadReportStyle style) {
    reportStyle = style;
  }

  /** From now on every request that starts service takes {@code factor} times as long. */
  void slowDown(int factor) {
    serviceNanos = serviceNanos * factor;
  }

  /**
   * From now on a {@code share} (0..1) of the requests that start service take {@code factor} times
   * as long, chosen by a {@link java.util.Random} seeded with {@code seed}: the same draws in every
   * run (which requests get them depends on arrival order).
   */
  void jitter(double share, int factor, long seed) {
    jitterShare = share;
    jitterFactor = factor;
    jitter = new java.util.Random(seed);
  }

  /** From now on every request that reaches a worker gets a 503 at once. */
  void failFast() {
    failing = true;
  }

  /** Closes the listener and all connections at once and interrupts requests in service. */
  synchronized void kill() {
    HttpServer s = server;
    if (s == null) {
      return;
    }
    server = null;
    responding.writeLock().lock(); // waits for responses being written (microseconds), blocks new ones
    try {
      dead = true;
      s.stop(0);
      pool.shutdownNow();
      admin.stop(0);
    } finally {
      responding.writeLock().unlock();
    }
  }

  /** Requests queued or in service right now (0 when dead). */
  int load() {
    ThreadPoolExecutor p = pool;
    return server == null || p == null ? 0 : inService.get() + p.getQueue().size();
  }

  int index() {
    return index;
  }

  /**
   * {@code backend-<index>}: the name the lab's tables, the response body and the balancers' target
   * ids give this backend. It does not change with the port, so a key strategy that hashes target ids
   * places the keys the same way in every run.
   */
  String name() {
    return "backend-" + index;
  }

  int port() {
    return port;
  }

  /** Where {@code GET /health} answers. */
  int adminPort() {
    return adminPort;
  }

  int workers() {
    return workers;
  }

  long serviceNanos() {
    return serviceNanos;
  }

  /** Requests that reached a worker since start (answered, failed fast, or cut by a kill). */
  long received() {
    return received.sum();
  }

  /** Requests the jitter slowed since start. */
  long jittered() {
    return jittered.sum();
  }

  /** Responses written since start. */
  long served() {
    return served.sum();
  }

  @Override
  public void close() {
    kill();
  }
}
