/** AWS credentials as the user gives them: static keys, else a named profile, else the default chain. */
export interface AwsSettings {
  profile?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  apiKey?: string;
}

/** Credentials for every AWS client: static keys, else a named profile, else the SDK's default chain. */
export function awsCredentials({ accessKeyId, secretAccessKey, sessionToken, profile }: AwsSettings) {
  if (accessKeyId && secretAccessKey) return { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } };
  return profile ? { profile } : {};
}

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/**
 * The same rule as a provider for parley's own signer. Static keys need no SDK at all; a profile or
 * the default chain (env, SSO, web identity, ECS, IMDS) loads the SDK's provider chain on first use.
 */
export function credentialProvider(beta: AwsSettings): () => Promise<Credentials> {
  const source: { credentials?: Credentials; profile?: string } = awsCredentials(beta);
  const fixed = source.credentials;
  if (fixed) return async () => fixed;
  let chain: (() => Promise<Credentials>) | undefined;
  return async () => {
    chain ??= (await import("@aws-sdk/credential-provider-node")).defaultProvider(source);
    return chain();
  };
}

/** What proves parley to AWS, as /health and `config show` name it. */
export function credentialKind(beta: AwsSettings): "api key" | "static keys" | "profile" | "default chain" {
  if (beta.apiKey) return "api key";
  if (beta.accessKeyId && beta.secretAccessKey) return "static keys";
  return beta.profile ? "profile" : "default chain";
}
