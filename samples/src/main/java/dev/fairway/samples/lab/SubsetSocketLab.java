package dev.fairway.samples.lab;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PeerCoordinate;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Subset;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * {@link Scenario#SUBSET}, the real-socket check of deterministic subsetting: {@value #CLIENTS}
 * clients, each its own {@link LoadBalancer} (at {@code PeerCoordinate.fixed(i, }{@value #CLIENTS}
 * {@code )}) and OkHttp client with one closed-loop user, over {@value #BACKENDS} {@link
 * CountingServer}s on loopback, every client sending {@link #CALLS_PER_CLIENT} calls. It runs twice in
 * one invocation: without a subset (every client on every backend) and with a window of {@value
 * #WINDOW}, each on fresh servers, and reports per backend the TCP connections the server accepted
 * and the calls it served, with max/mean and min/mean.
 *
 * <p>With one user per client, a client holds at most one connection per backend it calls: the
 * connections a backend accepts are the clients whose window reaches it (at least one call). Bounded by
 * the call count, and every wait by a timeout; everything started is closed before {@link #run}
 * returns.
 */
final class SubsetSocketLab {
  static final int CLIENTS = 40;
  static final int BACKENDS = 20;
  static final int WINDOW = 5;
  /** Calls each client sends; the smallest count at which every window edge gets its share. */
  static final int CALLS_PER_CLIENT = 250;
  /** Each call's service time on the server, at time scale 1. */
  static final Duration SERVICE = Duration.ofMillis(2);
  static final String DEFAULT_STRATEGY = "weighted-round-robin";

  /** One run: per backend (0-based) the connections accepted and calls served; per client its window. */
  record Run(boolean subset, int[] connections, long[] calls, int[] windowTargets, long errors, String firstError,
      double seconds) {

    int totalConnections() {
      int sum = 0;
      for (int c : connections) {
        sum += c;
      }
      return sum;
    }

    long totalCalls() {
      long sum = 0;
      for (long c : calls) {
        sum += c;
      }
      return sum;
    }
  }

  /** Both runs of one invocation, and what they were run with. */
  record Result(String strategy, int clients, int backends, int window, int callsPerClient, Run all, Run subset) {}

  private final LabOptions options;
  private final int clients;
  private final int backends;
  private final int window;
  private final int callsPerClient;

  SubsetSocketLab(LabOptions options) {
    this(options, CLIENTS, BACKENDS, WINDOW, CALLS_PER_CLIENT);
  }

  /** For tests: a smaller fleet. */
  SubsetSocketLab(LabOptions options, int clients, int backends, int window, int callsPerClient) {
    this.options = options;
    this.clients = clients;
    this.backends = backends;
    this.window = window;
    this.callsPerClient = callsPerClient;
  }

  /** The strategy inside each window: the one named with {@code --strategies NAME}, else weighted round robin. */
  static String strategyOf(LabOptions options) {
    return options.strategies().size() == 1 ? options.strategies().get(0) : DEFAULT_STRATEGY;
  }

  Result run(PrintStream progress) throws IOException, InterruptedException {
    String strategy = strategyOf(options);
    progress.printf(Locale.ROOT, "lab: subset, %d clients x %d backends, every client on every backend%n", clients,
        backends);
    Run all = runOnce(strategy, false);
    progress.printf(Locale.ROOT, "lab: subset, %d clients x %d backends, window %d%n", clients, backends, window);
    Run subset = runOnce(strategy, true);
    return new Result(strategy, clients, backends, window, callsPerClient, all, subset);
  }

  private Run runOnce(String strategy, boolean withSubset) throws IOException, InterruptedException {
    List<CountingServer> servers = new ArrayList<>();
    List<LoadBalancer> balancers = new ArrayList<>();
    List<OkHttpClient> okClients = new ArrayList<>();
    List<Thread> users = new ArrayList<>();
    AtomicLong errors = new AtomicLong();
    AtomicReference<String> firstError = new AtomicReference<>("");
    try {
      long serviceNanos = options.scaled(SERVICE).toNanos();
      Target[] targets = new Target[backends];
      for (int b = 0; b < backends; b++) {
        CountingServer s = CountingServer.start(b + 1, serviceNanos);
        servers.add(s);
        targets[b] = Target.of("127.0.0.1", s.port());
      }
      int[] windowTargets = new int[clients];
      for (int c = 0; c < clients; c++) {
        LoadBalancer.Builder builder = LoadBalancer.builder(ScenarioRun.SERVICE).targets(targets)
            .strategy(Strategy.named(strategy));
        if (withSubset) {
          builder.subset(Subset.of(window, PeerCoordinate.fixed(c, clients)).withFloor(window));
        }
        LoadBalancer lb = builder.build();
        balancers.add(lb);
        okClients.add(newClient(lb));
      }
      long start = System.nanoTime();
      for (int c = 0; c < clients; c++) {
        OkHttpClient client = okClients.get(c);
        Thread t = new Thread(() -> {
          Request request = new Request.Builder().url("http://" + ScenarioRun.SERVICE + "/work").build();
          for (int i = 0; i < callsPerClient; i++) {
            try (Response r = client.newCall(request).execute()) {
              r.body().bytes();
              if (r.code() != 200) {
                errors.incrementAndGet();
                firstError.compareAndSet("", "HTTP " + r.code());
              }
            } catch (IOException e) {
              errors.incrementAndGet();
              firstError.compareAndSet("", String.valueOf(e));
            }
          }
        }, "subset-lab-client-" + c);
        t.setDaemon(true);
        users.add(t);
        t.start();
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      for (Thread t : users) {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        if (t.isAlive()) {
          throw new IllegalStateException("subset lab: " + t.getName() + " still calling after 120 s");
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      for (int c = 0; c < clients; c++) {
        int n = 0;
        for (TargetStatus s : balancers.get(c).status()) {
          if (s.subsetShare() > 0) {
            n++;
          }
        }
        windowTargets[c] = n;
      }
      // Close the clients' connections before reading the servers, so nothing is still being accepted.
      for (OkHttpClient client : okClients) {
        ScenarioRun.shutdown(client);
      }
      int[] connections = new int[backends];
      long[] calls = new long[backends];
      for (int b = 0; b < backends; b++) {
        connections[b] = servers.get(b).accepted();
        calls[b] = servers.get(b).served();
      }
      return new Run(withSubset, connections, calls, windowTargets, errors.get(), firstError.get(), seconds);
    } finally {
      for (Thread t : users) {
        t.interrupt();
      }
      for (OkHttpClient client : okClients) {
        ScenarioRun.shutdown(client);
      }
      for (LoadBalancer lb : balancers) {
        lb.close();
      }
      for (CountingServer s : servers) {
        s.close();
      }
    }
  }

  private OkHttpClient newClient(LoadBalancer balancer) {
    Dispatcher dispatcher = new Dispatcher();
    return new OkHttpClient.Builder()
        .dispatcher(dispatcher)
        .connectionPool(new ConnectionPool(backends, 1, TimeUnit.MINUTES)) // one user: one per backend at most
        .addInterceptor(LoadBalancingInterceptor.builder().service(ScenarioRun.SERVICE, balancer)
            .maxAttempts(options.maxAttempts()).build())
        .connectTimeout(Duration.ofSeconds(2))
        .readTimeout(Duration.ofSeconds(30))
        .callTimeout(Duration.ofSeconds(60))
        .build();
  }

  /** max / mean of {@code values}; NaN when the mean is 0. */
  static double maxOverMean(double[] values) {
    double max = Double.NEGATIVE_INFINITY;
    for (double v : values) {
      max = Math.max(max, v);
    }
    return max / mean(values);
  }

  /** min / mean of {@code values}; NaN when the mean is 0. */
  static double minOverMean(double[] values) {
    double min = Double.POSITIVE_INFINITY;
    for (double v : values) {
      min = Math.min(min, v);
    }
    return min / mean(values);
  }

  private static double mean(double[] values) {
    double sum = 0;
    for (double v : values) {
      sum += v;
    }
    return values.length == 0 || sum == 0 ? Double.NaN : sum / values.length;
  }

  static double[] doubles(int[] values) {
    double[] out = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = values[i];
    }
    return out;
  }

  static double[] doubles(long[] values) {
    double[] out = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = values[i];
    }
    return out;
  }

  static String table(Result r, LabOptions options) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "%nsubset: %d clients x %d backends on loopback, one user per client, %d calls"
        + " per client, %s; each client its own balancer at PeerCoordinate.fixed(i, %d); window %d (Subset.of(%d, ...)"
        + ".withFloor(%d)) beside every client on every backend; connections = sockets each server accepted"
        + " (time scale %s)%n", r.clients(), r.backends(), r.callsPerClient(), r.strategy(), r.clients(), r.window(),
        r.window(), r.window(), ResultTables.trim(options.timeScale())));
    sb.append(String.format(Locale.ROOT, "%-11s %12s %12s %12s %12s%n", "", "connections", "", "calls", ""));
    sb.append(String.format(Locale.ROOT, "%-11s %12s %12s %12s %12s%n", "backend", "all", "subset", "all", "subset"));
    for (int b = 0; b < r.backends(); b++) {
      sb.append(String.format(Locale.ROOT, "%-11s %12d %12d %12d %12d%n", "backend-" + (b + 1),
          r.all().connections()[b], r.subset().connections()[b], r.all().calls()[b], r.subset().calls()[b]));
    }
    sb.append(String.format(Locale.ROOT, "%-11s %12d %12d %12d %12d%n", "total", r.all().totalConnections(),
        r.subset().totalConnections(), r.all().totalCalls(), r.subset().totalCalls()));
    sb.append(String.format(Locale.ROOT, "%-11s %12.3f %12.3f %12.3f %12.3f%n", "max/mean",
        maxOverMean(doubles(r.all().connections())), maxOverMean(doubles(r.subset().connections())),
        maxOverMean(doubles(r.all().calls())), maxOverMean(doubles(r.subset().calls()))));
    sb.append(String.format(Locale.ROOT, "%-11s %12.3f %12.3f %12.3f %12.3f%n", "min/mean",
        minOverMean(doubles(r.all().connections())), minOverMean(doubles(r.subset().connections())),
        minOverMean(doubles(r.all().calls())), minOverMean(doubles(r.subset().calls()))));
    sb.append(String.format(Locale.ROOT, "targets in each client's window: all %s, subset %s%n",
        range(r.all().windowTargets()), range(r.subset().windowTargets())));
    sb.append(String.format(Locale.ROOT, "errors: all %d%s, subset %d%s; seconds: all %.2f, subset %.2f%n",
        r.all().errors(), r.all().errors() == 0 ? "" : " (" + r.all().firstError() + ")", r.subset().errors(),
        r.subset().errors() == 0 ? "" : " (" + r.subset().firstError() + ")", r.all().seconds(), r.subset().seconds()));
    return sb.toString();
  }

  private static String range(int[] values) {
    int min = Integer.MAX_VALUE;
    int max = Integer.MIN_VALUE;
    double sum = 0;
    for (int v : values) {
      min = Math.min(min, v);
      max = Math.max(max, v);
      sum += v;
    }
    return String.format(Locale.ROOT, "%d..%d (mean %.2f)", min, max, sum / values.length);
  }
}
