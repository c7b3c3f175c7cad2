import { fetchData } from './api';

export async function show() {
  const data = await fetchData('/items');
  console.log(data);
}
